import { Emitter } from '@socket.io/redis-emitter';
import type { Redis } from 'ioredis';
import { rooms, type EventTarget, type RealtimeEvent } from './rooms';

/** Events held while Redis is not ready; beyond this the oldest are dropped (the messages themselves are stored). */
const MAX_HELD = 10_000;

/** How long `flush()` waits for Redis to take events; beyond it they may arrive late (the messages are stored). */
const FLUSH_WAIT_MS = 2000;

/**
 * How long an event published once (emitOnce) keeps its key: an activity retried later than this (its worker was
 * down that long) publishes it again.
 */
export const ONCE_TTL_SECONDS = 3600;

/** KEYS[1] the event's key; ARGV: channel, message, TTL. Publishes only when the key was not set: -1 when it was. */
const PUBLISH_ONCE = `
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) then return redis.call('PUBLISH', ARGV[1], ARGV[2]) end
return -1`;

/**
 * PUBLISH in call order, across the first connection and every reconnection. ioredis queues a command issued before
 * the connection is up, but writes PUBLISH (flagged `loading`) directly once the socket is connected and before the
 * queue is flushed: a burst of deltas at a worker's first turn reached clients as seq 4,5,…,0,1,2,3. Until Redis is
 * ready, events wait here in order and go out, in order, after ioredis's own queue.
 *
 * `flush()` resolves once Redis has taken every event published so far. A turn's events come from whichever
 * worker process runs each activity, each with its own connection; an activity that flushes before it completes
 * puts its events ahead of everything the turn emits after it (Redis hands them to the API in the order it took
 * them), so a turn's last deltas can never arrive after its final message.
 */
export function orderedPublisher(redis: Redis) {
  const held: Array<[send: () => Promise<number>, sent: (published: Promise<number>) => void]> = [];
  const pending = new Set<Promise<unknown>>();
  const track = (published: Promise<number>) => {
    // The emitter drops what publish returns: a failed publish (Redis gone) must not be an unhandled rejection.
    const settled = published.catch(() => 0);
    pending.add(settled);
    void settled.then(() => pending.delete(settled));
    return published;
  };
  redis.on('ready', () => {
    for (const [send, sent] of held.splice(0)) sent(track(send()));
  });
  const inOrder = (send: () => Promise<number>): Promise<number> => {
    if (redis.status === 'ready' && held.length === 0) return track(send());
    if (held.length >= MAX_HELD) held.shift()![1](Promise.resolve(0));
    // Settles once it is really published (or dropped), so flush() waits for it too.
    const published = track(new Promise<number>((sent) => held.push([send, sent])));
    if (redis.status === 'wait') redis.connect().catch(() => undefined);
    return published;
  };
  return {
    publish: (channel: string, message: Buffer | string) => inOrder(() => redis.publish(channel, message)),
    /** publish(), unless an event under `key` was published before (within ONCE_TTL_SECONDS): one atomic step. */
    publishOnce: (key: string, channel: string, message: Buffer | string) =>
      inOrder(() => redis.eval(PUBLISH_ONCE, 1, key, channel, message, ONCE_TTL_SECONDS) as Promise<number>),
    /** Resolves once Redis took every event published so far, or after FLUSH_WAIT_MS (Redis away). */
    async flush(): Promise<void> {
      if (pending.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(pending),
        new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_WAIT_MS))),
      ]);
      clearTimeout(timer);
    },
  };
}

/** Publishes realtime events through Redis, so whichever API replica holds the client's socket delivers. */
export function createRealtimeEmitter(redis: Redis) {
  const publisher = orderedPublisher(redis);
  // The emitter only ever calls publish() on its client.
  const emitter = new Emitter(publisher);
  const send = (via: Emitter, event: RealtimeEvent, target: EventTarget, payload: Record<string, unknown>) =>
    via
      .to([
        rooms.user(target.organizationId, target.userId),
        rooms.conversation(target.organizationId, target.conversationId),
      ])
      .emit(event, { ...payload, conversationId: target.conversationId });
  return {
    flush: () => publisher.flush(),
    emit(event: RealtimeEvent, target: EventTarget, payload: Record<string, unknown>) {
      send(emitter, event, target, payload);
    },
    /**
     * emit(), once per `key` whichever process emits it and however often: the key is taken and the event
     * published in one step in Redis, so an activity retried after its worker died right after publishing (before
     * Temporal heard it complete) publishes nothing again, and one that died before publishes it.
     */
    emitOnce(key: string, event: RealtimeEvent, target: EventTarget, payload: Record<string, unknown>) {
      const once = new Emitter({
        publish: (channel: string, message: Buffer | string) =>
          publisher.publishOnce(`realtime-once:{${target.organizationId}}:${key}`, channel, message),
      });
      send(once, event, target, payload);
    },
    /** Disconnects every socket in these rooms, on whichever API replica holds it (credentials revoked or
     * rights changed: the client reconnects and is authorised afresh). */
    disconnect(roomNames: string[]) {
      if (roomNames.length) emitter.in(roomNames).disconnectSockets(true);
    },
  };
}

export type RealtimeEmitter = ReturnType<typeof createRealtimeEmitter>;
