import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import { rooms, type EventTarget, type RealtimeEvent } from './rooms';

/** Publishes realtime events through Redis, so whichever API replica holds the client's socket delivers. */
export function createRealtimeEmitter(redis: Redis) {
  const emitter = new Emitter(redis);
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
