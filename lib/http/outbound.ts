import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

// Addresses an outbound request from the service must not reach unless explicitly allowed: loopback,
// private, link-local (cloud metadata), carrier-grade NAT and unspecified ranges.
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
blocked.addAddress('::', 'ipv6');
blocked.addAddress('::1', 'ipv6');
blocked.addSubnet('fc00::', 7, 'ipv6');
blocked.addSubnet('fe80::', 10, 'ipv6');

/** The URL is not one the service may call (scheme, or an address it must not reach). */
export class BlockedAddressError extends Error {}

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
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
  for (const { address, family } of addresses) {
    const mapped = address.startsWith('::ffff:') ? address.slice(7) : address;
    const type = family === 6 && mapped === address ? 'ipv6' : 'ipv4';
    if (blocked.check(mapped, type))
      throw new BlockedAddressError(`${parsed.hostname} resolves to a private address`);
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
