import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type Socket } from 'socket.io';
import type { RequestContext } from '@lib/auth/context';
import type { Deps } from '@lib/deps';
import { AppError, unauthorized } from '@lib/errors';
import { rooms } from '@lib/realtime/rooms';

interface SocketData {
  ctx: RequestContext;
  /** The credentials the socket connected with: every client event is authorised with them again. */
  authorization?: string;
  organizationId: string;
}

type Ack = (response: { ok: true } | { ok: false; error: { code: string; message: string } }) => void;

/** The longest a timer can wait (setTimeout overflows beyond it). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function credentials(socket: Socket): { authorization?: string; organizationId?: string } {
  const auth = socket.handshake.auth as { token?: unknown; organizationId?: unknown };
  const header = socket.handshake.headers.authorization;
  const query = socket.handshake.query.organizationId;
  return {
    authorization: header ?? (typeof auth.token === 'string' ? `Bearer ${auth.token}` : undefined),
    organizationId:
      typeof auth.organizationId === 'string'
        ? auth.organizationId
        : typeof socket.handshake.headers['x-organization-id'] === 'string'
          ? socket.handshake.headers['x-organization-id']
          : typeof query === 'string'
            ? query
            : undefined,
  };
}

/** A string field of a client payload ('' when absent or not a string). */
function field(payload: unknown, name: string): string {
  const value = (payload as Record<string, unknown> | null)?.[name];
  return typeof value === 'string' ? value : '';
}

function reply(ack: unknown, error?: unknown) {
  if (typeof ack !== 'function') return;
  if (!error) return (ack as Ack)({ ok: true });
  const e = error instanceof AppError ? error : new AppError(500, 'internal_error', 'internal error');
  (ack as Ack)({ ok: false, error: { code: e.code, message: e.message } });
}

/**
 * socket.io on the API's HTTP server. A client authenticates with the same bearer credentials as HTTP (header
 * `Authorization`, or `auth.token`); its organization is the one the credential belongs to, or the one it names
 * (`auth.organizationId`, header `x-organization-id` or query `organizationId`; required for external OIDC
 * tokens). It joins its user room at once: replies to its own turns arrive without asking. Every client event
 * is authorised again with the connection's credentials, the socket is disconnected when its token expires, and
 * revoking a key or changing or ending a membership disconnects the affected sockets on every replica. Events
 * fan out through Redis, so a worker can publish and any API replica delivers.
 */
export function attachRealtime(httpServer: HttpServer, deps: Deps) {
  // The adapter's connections subscribe and publish for the life of the process; its commands are not a
  // request's, and a subscription failed on a deadline (a busy event loop at start) would crash the process.
  const pub = deps.redis.duplicate({ commandTimeout: undefined });
  const sub = deps.redis.duplicate({ commandTimeout: undefined });
  const io = new Server<Record<string, never>, Record<string, never>, Record<string, never>, SocketData>(
    httpServer,
    { adapter: createAdapter(pub, sub), serveClient: false },
  );
  const { conversations } = deps.services;

  /** The caller as of now: a revoked key, a removed member or an expired token fail here. */
  async function authorise(
    data: Pick<SocketData, 'authorization' | 'organizationId'>,
  ): Promise<RequestContext> {
    const ctx = await deps.authenticator.authenticate(data.authorization, data.organizationId);
    if (!ctx.capabilities.has('conversations.use'))
      throw new AppError(403, 'forbidden', 'this role cannot chat');
    return ctx;
  }

  io.use((socket, next) => {
    const { authorization, organizationId } = credentials(socket);
    (async () => {
      const orgId = organizationId ?? (await deps.authenticator.organizationOf(authorization));
      if (!orgId) throw unauthorized('name the organization (auth.organizationId) for this credential');
      socket.data = {
        ctx: await authorise({ authorization, organizationId: orgId }),
        authorization,
        organizationId: orgId,
      };
    })().then(
      () => next(),
      (err: unknown) => next(new Error(err instanceof AppError ? err.message : 'unauthorized')),
    );
  });

  io.on('connection', (socket) => {
    const { ctx } = socket.data;
    void socket.join(rooms.user(ctx.organizationId, ctx.userId));
    if (ctx.apiKeyId) void socket.join(rooms.apiKey(ctx.organizationId, ctx.apiKeyId));
    if (ctx.expiresAt) {
      const expiry = setTimeout(
        () => socket.disconnect(true),
        Math.min(ctx.expiresAt.getTime() - Date.now(), MAX_TIMER_MS),
      );
      socket.once('disconnect', () => clearTimeout(expiry));
    }

    /** Runs a client event as the caller is now; a caller no longer authorised is disconnected. */
    const handle =
      (run: (current: RequestContext, payload: unknown) => Promise<unknown>) =>
      (payload: unknown, ack: unknown) => {
        authorise(socket.data)
          .catch((err: unknown) => {
            reply(ack, err);
            socket.disconnect(true);
            return null;
          })
          .then((current) => current && run(current, payload).then(() => reply(ack)))
          .catch((err: unknown) => reply(ack, err));
      };

    // Watch a conversation one may read (for example an admin following another member's conversation).
    socket.on(
      'subscribe',
      handle(async (current, payload) => {
        const id = field(payload, 'conversationId');
        await conversations.load(current, id);
        await socket.join(rooms.conversation(current.organizationId, id));
      }),
    );
    socket.on(
      'unsubscribe',
      handle(async (current, payload) => {
        await socket.leave(rooms.conversation(current.organizationId, field(payload, 'conversationId')));
      }),
    );
    // The result of a frontend tool call the agent made in this client.
    socket.on(
      'frontend-tool-result',
      handle((current, payload) =>
        conversations.frontendToolResult(current, {
          conversationId: field(payload, 'conversationId'),
          requestId: field(payload, 'requestId'),
          toolCallId: field(payload, 'toolCallId'),
          result: (payload as { result?: unknown } | null)?.result ?? null,
        }),
      ),
    );
  });

  return {
    io,
    async close() {
      await io.close();
      pub.disconnect();
      sub.disconnect();
    },
  };
}
