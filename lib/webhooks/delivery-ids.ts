import { createHash } from 'node:crypto';
import { derivedId } from '@lib/ids';

/**
 * The delivery id of a signed delivery: its event id alone. The signature covers the id and the body, so only
 * the sender can send that id, and the same id is the same event. Unsigned deliveries accepted before the id
 * took their content in were recorded under this id too.
 */
export function eventDeliveryId(webhookId: string, eventId: string): string {
  return derivedId('whd', [webhookId, eventId]);
}

/**
 * What an unsigned delivery carries to its handlers (body and query parameters; not the headers, which a
 * sender's retry may change), hashed. Anyone may send an unsigned delivery with any event id, so the id alone
 * must not decide that a delivery was already taken: a stranger who sent the id first would silence the real one.
 */
export function contentDigest(body: unknown, queryParams: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([body ?? null, queryParams ?? {}]))
    .digest('base64url');
}

/** The delivery id of an unsigned delivery with an event id: the same id and the same content are one delivery. */
export function unsignedDeliveryId(webhookId: string, eventId: string, content: string): string {
  return derivedId('whd', [webhookId, eventId, content]);
}
