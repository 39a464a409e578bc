import type { Server as HttpServer } from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { Server, type Socket } from 'socket.io';
import type { RequestContext } from '@lib/auth/context';
import type { Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { rooms } from '@lib/realtime/rooms';

interface SocketData {
  ctx: RequestContext;
}

type Ack = (response: { ok: true } | { ok: false; error: { code: string; message: string } }) => void;

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
 * `Authorization`, or `auth.token`) plus its organization (`auth.organizationId`, header `x-organization-id` or
 * query `organizationId`). It joins its user room at once: replies to its own turns arrive without asking.
 * Events fan out through Redis, so a worker can publish and any API replica delivers.
 */
export function attachRealtime(httpServer: HttpServer, deps: Deps) {
  const pub = deps.redis.duplicate();
  const sub = deps.redis.duplicate();
  const io = new Server<Record<string, never>, Record<string, never>, Record<string, never>, SocketData>(
    httpServer,
    {
      adapter: createAdapter(pub, sub),
      serveClient: false,
    },
  );
  const { conversations } = deps.services;

  io.use((socket, next) => {
    const { authorization, organizationId } = credentials(socket);
    deps.authenticator
      .authenticate(authorization, organizationId ?? '')
      .then((ctx) => {
        if (!ctx.capabilities.has('conversations.use'))
          throw new AppError(403, 'forbidden', 'this role cannot chat');
        socket.data.ctx = ctx;
        next();
      })
      .catch((err: unknown) => next(new Error(err instanceof AppError ? err.message : 'unauthorized')));
  });

  io.on('connection', (socket) => {
    const { ctx } = socket.data;
    void socket.join(rooms.user(ctx.organizationId, ctx.userId));

    // Watch a conversation one may read (for example an admin following another member's conversation).
    socket.on('subscribe', (payload: { conversationId?: unknown }, ack: unknown) => {
      const id = field(payload, 'conversationId');
      conversations
        .load(ctx, id)
        .then(() => socket.join(rooms.conversation(ctx.organizationId, id)))
        .then(() => reply(ack))
        .catch((err: unknown) => reply(ack, err));
    });
    socket.on('unsubscribe', (payload: { conversationId?: unknown }, ack: unknown) => {
      void socket.leave(rooms.conversation(ctx.organizationId, field(payload, 'conversationId')));
      reply(ack);
    });
    // The result of a frontend tool call the agent made in this client.
    socket.on(
      'frontend-tool-result',
      (
        payload: { conversationId?: unknown; requestId?: unknown; toolCallId?: unknown; result?: unknown },
        ack: unknown,
      ) => {
        conversations
          .frontendToolResult(ctx, {
            conversationId: field(payload, 'conversationId'),
            requestId: field(payload, 'requestId'),
            toolCallId: field(payload, 'toolCallId'),
            result: payload?.result ?? null,
          })
          .then(() => reply(ack))
          .catch((err: unknown) => reply(ack, err));
      },
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
