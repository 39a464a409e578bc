/**
 * One organization's chat client over socket.io: assembles each turn's streamed reply as docs/agents.md tells
 * clients to (by `seq`, the latest round's latest attempt), and counts every turn's final events, so the end of
 * the soak can tell a reply that came twice from one that came once.
 */
import { io, type Socket } from 'socket.io-client';
import { deltaPlace } from '../lib/deltas';

interface Pending {
  pieces: string[];
  latest: [number, number];
  done: (final: { type: string; text?: string; status?: string }) => void;
}

export async function connectChat(baseUrl: string, orgId: string, key: string) {
  const pending = new Map<string, Pending>();
  /** final events (`message` or `error`) per requestId, over the whole run */
  const finals = new Map<string, number>();
  const socket: Socket = io(baseUrl, {
    transports: ['websocket'],
    auth: { token: key, organizationId: orgId },
  });
  socket.on('conversation', (p: Record<string, unknown>) => {
    const requestId = String(p.requestId);
    const turn = pending.get(requestId);
    if (p.type === 'delta' && turn) {
      const place = deltaPlace(turn.latest, p);
      if (place === 'stale') return;
      if (place === 'newer') turn.pieces = [];
      turn.pieces[Number(p.seq)] = typeof p.text === 'string' ? p.text : '';
    } else if (p.type === 'message' || p.type === 'error') {
      finals.set(requestId, (finals.get(requestId) ?? 0) + 1);
      const message = p.message as { content?: Array<{ text?: string }>; status?: string } | undefined;
      turn?.done({
        type: p.type,
        text: message?.content?.map((c) => c.text ?? '').join(''),
        status: message?.status,
      });
    }
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', reject);
  });

  return {
    finals,
    /**
     * Waits for `requestId`'s final event (register before the POST: it may come before the answer); resolves
     * with the streamed text and the final event, or rejects after `timeoutMs`.
     */
    expect(requestId: string, timeoutMs: number) {
      let cancel = () => {};
      const result = new Promise<{ streamed: string; type: string; text?: string; status?: string }>(
        (resolve, reject) => {
          const timer = setTimeout(() => {
            pending.delete(requestId);
            reject(new Error(`turn ${requestId}: no final event within ${timeoutMs} ms`));
          }, timeoutMs);
          const entry: Pending = {
            pieces: [],
            latest: [0, 1],
            done: (final) => {
              clearTimeout(timer);
              pending.delete(requestId);
              resolve({ streamed: entry.pieces.join(''), ...final });
            },
          };
          pending.set(requestId, entry);
          cancel = () => {
            clearTimeout(timer);
            pending.delete(requestId);
          };
        },
      );
      result.catch(() => undefined);
      return { result, cancel };
    },
    close: () => socket.disconnect(),
  };
}

export type ChatClient = Awaited<ReturnType<typeof connectChat>>;
