import { io, type Socket } from 'socket.io-client';
import type { TestEnv } from './env';
import { eventually } from './wait';

export interface ReceivedEvent {
  event: string;
  payload: Record<string, unknown>;
}

/** A socket.io client of the test app that records every event it receives. */
export async function connectClient(
  env: TestEnv,
  organizationId: string,
  token: string,
  via: 'header' | 'auth' = 'header',
) {
  const { url } = await env.listen();
  return connectClientAt(url, organizationId, token, via);
}

/** A socket.io client of the API at `url` (for example one replica among several) recording every event. */
export async function connectClientAt(
  url: string,
  organizationId: string,
  token: string,
  via: 'header' | 'auth' = 'header',
) {
  const socket: Socket = io(url, {
    transports: ['websocket'],
    reconnection: false,
    ...(via === 'header'
      ? { extraHeaders: { Authorization: `Bearer ${token}`, 'x-organization-id': organizationId } }
      : { auth: { token, organizationId } }),
  });
  const events: ReceivedEvent[] = [];
  let disconnectReason: string | undefined;
  socket.on('disconnect', (reason) => (disconnectReason = reason));
  socket.onAny((event: string, payload: Record<string, unknown>) => events.push({ event, payload }));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('connect_error', reject);
  });
  return {
    socket,
    events,
    /** events of one turn, in arrival order */
    turn: (requestId: string) => events.filter((e) => e.payload.requestId === requestId),
    waitFor: (match: (e: ReceivedEvent) => boolean, timeoutMs?: number) =>
      eventually(() => events.find(match), timeoutMs),
    emit: (event: string, payload: unknown) =>
      new Promise<{ ok: boolean; error?: { code: string } }>((resolve) =>
        socket.emit(event, payload, resolve),
      ),
    /** resolves with the reason once the socket is disconnected */
    disconnected: (timeoutMs?: number) => eventually(() => disconnectReason, timeoutMs),
    close: () => socket.disconnect(),
  };
}

/** Fails to connect: resolves with the error message. */
export async function connectError(env: TestEnv, options: Parameters<typeof io>[1]): Promise<string> {
  const { url } = await env.listen();
  const socket = io(url, { transports: ['websocket'], reconnection: false, ...options });
  try {
    return await new Promise<string>((resolve, reject) => {
      socket.once('connect_error', (err) => resolve(err.message));
      socket.once('connect', () => reject(new Error('connected without valid credentials')));
    });
  } finally {
    socket.disconnect();
  }
}
