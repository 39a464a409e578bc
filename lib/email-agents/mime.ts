import { createHash } from 'node:crypto';
import { fileExtension } from '@lib/knowledge-bases/parsing/extensions';

/*
 * Pure helpers for agent mail: identities of messages (threading, idempotency), loop guards, reply headers,
 * the text a user message gets and the attachment filter.
 */

const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

/** `<abc@x>` → `abc@x`; null when there is nothing between the brackets. */
export function normaliseMessageId(value: string | undefined | null): string | null {
  const id = (value ?? '').trim().replace(/^<+/, '').replace(/>+$/, '').trim();
  return id && !/\s/.test(id) ? id : null;
}

/** Every Message-ID of a References / In-Reply-To value (`<a@x> <b@y>`), in order. */
export function messageIdList(value: string | string[] | undefined | null): string[] {
  const text = Array.isArray(value) ? value.join(' ') : (value ?? '');
  const bracketed = [...text.matchAll(/<([^<>\s]+)>/g)].map((m) => m[1]!);
  if (bracketed.length) return bracketed;
  return text
    .split(/\s+/)
    .map(normaliseMessageId)
    .filter((id): id is string => id !== null);
}

/** The key of a message: its Message-ID's hash, or the hash of the whole message when it has none (so an
 * identical redelivery is still recognised). Hex, 40 characters. */
export function messageKeyOf(messageId: string | null, raw: Uint8Array): string {
  return (messageId ? sha256(`id:${messageId}`) : sha256(raw)).slice(0, 40);
}

/** The key a Message-ID is found under when a later mail refers to it. */
export function threadKeyOf(messageId: string): string {
  return sha256(`id:${messageId}`).slice(0, 40);
}

/** The ids a reply refers to, nearest first: In-Reply-To, then References from the newest. */
export function threadCandidates(inReplyTo: string | undefined, references: string | string[] | undefined) {
  const ids = [...messageIdList(inReplyTo), ...messageIdList(references).reverse()];
  return [...new Set(ids)].slice(0, 50);
}

/**
 * The value of one header in the header block of a raw message (folded lines unfolded), or null. Enough for
 * the few headers read before a message is parsed (Message-ID).
 */
export function rawHeader(raw: Uint8Array, name: string): string | null {
  const text = Buffer.from(raw.subarray(0, Math.min(raw.length, 256 * 1024))).toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const wanted = `${name.toLowerCase()}:`;
  for (const line of block.split(/\r?\n/)) {
    if (line.toLowerCase().startsWith(wanted)) return line.slice(wanted.length).trim();
  }
  return null;
}

/**
 * Why a message must not be answered by a machine (RFC 3834), or null: bounces (empty envelope sender),
 * auto-replies and other automatic mail, bulk and list mail. Answering those makes mail loops.
 */
export function automaticMailReason(
  envelopeFrom: string,
  header: (name: string) => string | null,
): string | null {
  if (!envelopeFrom.trim()) return 'a bounce or notification (empty envelope sender)';
  const autoSubmitted = header('auto-submitted')?.toLowerCase();
  if (autoSubmitted && autoSubmitted !== 'no')
    return `an automatic message (Auto-Submitted: ${autoSubmitted})`;
  const precedence = header('precedence')?.toLowerCase();
  if (precedence && ['bulk', 'junk', 'list', 'auto_reply'].includes(precedence))
    return `bulk or list mail (Precedence: ${precedence})`;
  if (header('list-id') || header('list-unsubscribe')) return 'mailing-list mail';
  if (header('x-autoreply') || header('x-autorespond')) return 'an automatic reply';
  return null;
}

/** `Re: ` once, however many the subject already has. */
export function replySubject(subject: string | undefined): string {
  const bare = (subject ?? '').replace(/^(\s*(re|aw|sv)\s*:\s*)+/i, '').trim();
  return `Re: ${bare || '(no subject)'}`;
}

/** The conversation title a mail gives: its subject without reply prefixes. */
export function titleOf(subject: string | undefined): string {
  const bare = (subject ?? '').replace(/^(\s*(re|fwd?|aw|sv)\s*:\s*)+/i, '').trim();
  return (bare || 'Email').slice(0, 200);
}

/**
 * The new text of a reply: the quoted earlier message (lines starting with `>` at the end, with the
 * "On … wrote:" line before them) is dropped, since the conversation already holds it.
 */
export function stripQuotedReply(text: string): string {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  let end = lines.length;
  while (end > 0 && (lines[end - 1]!.trim() === '' || lines[end - 1]!.startsWith('>'))) end--;
  if (end < lines.length && end > 0 && /\bwrote:\s*$/i.test(lines[end - 1]!)) end--;
  const kept = lines.slice(0, end).join('\n').trim();
  return kept || text.trim();
}

/** Whether an attachment's extension passes the agent's filter (`pdf,docx`); no filter lets every one pass. */
export function attachmentAllowed(fileName: string, filter: string | null | undefined): boolean {
  const ext = fileExtension(fileName).slice(1);
  if (!ext) return false;
  if (!filter) return true;
  return filter.split(',').includes(ext);
}

/** `a@agents.example.com` → `agents.example.com`. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

/** A reply's Message-ID: fixed per inbound mail, so a resent reply (after a lost acknowledgement) is the same
 * message to the receiver. */
export function replyMessageId(messageKey: string, agentAddress: string): string {
  return `reply-${messageKey.slice(0, 32)}@${domainOf(agentAddress)}`;
}
