import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

/** The URL is not one the service may call (scheme, or an address it must not reach). */
export class BlockedAddressError extends Error {}

/**
 * Whether the service may connect to this address unless private outbound is allowed: only ordinary unicast
 * addresses. Everything ipaddr.js classifies otherwise is refused: loopback, private, link-local (cloud
 * metadata), carrier-grade NAT, benchmarking (198.18/15) and other reserved IPv4 ranges, unique-local,
 * multicast, unspecified, and the IPv6 forms that embed an IPv4 address another way (NAT64, 6to4, Teredo).
 * An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged by the IPv4 address it maps.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) parsed = parsed.toIPv4Address();
  return parsed.range() === 'unicast';
}

/** Throws BlockedAddressError when the URL is not http(s) or its host resolves to a non-public address. */
export async function assertPublicUrl(url: string, allowPrivate: boolean): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedAddressError(`'${url}' is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new BlockedAddressError(`${parsed.protocol} URLs are not allowed`);
  if (allowPrivate) return parsed;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  const addresses = ipaddr.isValid(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address);
  for (const address of addresses) {
    if (!isPublicAddress(address))
      throw new BlockedAddressError(`${parsed.hostname} resolves to a private or reserved address`);
  }
  return parsed;
}

export interface OutboundLimits {
  timeoutMs: number;
  /** Bytes of the response body read at most; the rest is not read. */
  maxBodyBytes: number;
}

export interface OutboundResponse {
  status: number;
  contentType: string | null;
  body: string;
  /** The body was longer than maxBodyBytes. */
  truncated: boolean;
}

/** Reads at most `max` bytes of a response body while it streams, then stops reading. */
async function readCapped(res: Response, max: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = max - size;
    chunks.push(value.byteLength > room ? value.subarray(0, room) : value);
    size += Math.min(value.byteLength, room);
    if (value.byteLength > room) {
      truncated = true;
      await reader.cancel();
      break;
    }
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}

/**
 * The one client for outbound HTTP a tenant can aim (tool requests, callbacks): http/https only, no private
 * addresses unless the deployment allows them, no redirects followed, time and body size capped.
 */
export function createOutboundClient(settings: { allowPrivate: boolean }) {
  return {
    /** Throws BlockedAddressError when the service must not call this URL. */
    check(url: string): Promise<URL> {
      return assertPublicUrl(url, settings.allowPrivate);
    },

    async request(
      url: string,
      init: { method: string; headers?: Record<string, string>; body?: string },
      limits: OutboundLimits,
    ): Promise<OutboundResponse> {
      const checked = await assertPublicUrl(url, settings.allowPrivate);
      const res = await fetch(checked, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(limits.timeoutMs),
      });
      const { text, truncated } = await readCapped(res, limits.maxBodyBytes);
      return { status: res.status, contentType: res.headers.get('content-type'), body: text, truncated };
    },
  };
}

export type OutboundClient = ReturnType<typeof createOutboundClient>;
