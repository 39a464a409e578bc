import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import { rooms, type EventTarget, type RealtimeEvent } from './rooms';

/** Events held while Redis is not ready; beyond this the oldest are dropped (the messages themselves are stored). */
const MAX_HELD = 10_000;

/**
 * PUBLISH in call order, across the first connection and every reconnection. ioredis queues a command issued before
 * the connection is up, but writes PUBLISH (flagged `loading`) directly once the socket is connected and before the
 * queue is flushed: a burst of deltas at a worker's first turn reached clients as seq 4,5,…,0,1,2,3. Until Redis is
 * ready, events wait here in order and go out, in order, after ioredis's own queue.
 */
export function orderedPublisher(redis: Redis) {
  const held: Array<[channel: string, message: Buffer | string]> = [];
  redis.on('ready', () => {
    for (const [channel, message] of held.splice(0)) redis.publish(channel, message).catch(() => undefined);
  });
  return {
    publish(channel: string, message: Buffer | string): Promise<number> {
      if (redis.status === 'ready' && held.length === 0) {
        // The emitter drops what publish returns: a failed publish (Redis gone) must not be an unhandled rejection.
        const published = redis.publish(channel, message);
        published.catch(() => undefined);
        return published;
      }
      if (held.length >= MAX_HELD) held.shift();
      held.push([channel, message]);
      if (redis.status === 'wait') redis.connect().catch(() => undefined);
      return Promise.resolve(0);
    },
  };
}

/** Publishes realtime events through Redis, so whichever API replica holds the client's socket delivers. */
export function createRealtimeEmitter(redis: Redis) {
  // The emitter only ever calls publish() on its client.
  const emitter = new Emitter(orderedPublisher(redis));
  return {
    emit(event: RealtimeEvent, target: EventTarget, payload: Record<string, unknown>) {
      emitter
        .to([
          rooms.user(target.organizationId, target.userId),
          rooms.conversation(target.organizationId, target.conversationId),
        ])
        .emit(event, { ...payload, conversationId: target.conversationId });
    },
    /** Disconnects every socket in these rooms, on whichever API replica holds it (credentials revoked or
     * rights changed: the client reconnects and is authorised afresh). */
    disconnect(roomNames: string[]) {
      if (roomNames.length) emitter.in(roomNames).disconnectSockets(true);
    },
  };
}

export type RealtimeEmitter = ReturnType<typeof createRealtimeEmitter>;
