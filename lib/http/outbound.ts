import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent, fetch } from 'undici';

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

/** Resolves a host name to all its addresses (dns.lookup by default; tests pass their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** The host of a URL without the brackets of an IPv6 literal. */
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** A parsed http(s) URL; an IP-literal host must be public. No DNS here: names are checked when connecting. */
export function parseOutboundUrl(url: string, allowPrivate: boolean): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedAddressError(`'${url}' is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new BlockedAddressError(`${parsed.protocol} URLs are not allowed`);
  const host = hostOf(parsed);
  if (!allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host))
    throw new BlockedAddressError(`${parsed.hostname} is a private or reserved address`);
  return parsed;
}

/** Every address of a name, or BlockedAddressError when any of them is not public. */
async function publicAddresses(hostname: string, resolve: Resolver): Promise<LookupAddress[]> {
  const addresses = await resolve(hostname);
  const refused = addresses.find((a) => !isPublicAddress(a.address));
  if (refused) throw new BlockedAddressError(`${hostname} resolves to a private or reserved address`);
  return addresses;
}

/** Throws BlockedAddressError when the URL is not http(s) or its host resolves now to a non-public address. */
export async function assertPublicUrl(
  url: string,
  allowPrivate: boolean,
  resolve = systemResolver,
): Promise<URL> {
  const parsed = parseOutboundUrl(url, allowPrivate);
  const host = hostOf(parsed);
  if (!allowPrivate && !ipaddr.isValid(host)) await publicAddresses(host, resolve);
  return parsed;
}

export interface OutboundLimits {
  timeoutMs: number;
  /** Bytes of the response body read at most; the rest is not read. */
  maxBodyBytes: number;
}

/** A response as bytes with all its headers (what a browser page is given). */
export interface OutboundBytesResponse {
  status: number;
  /** Header names in lower case; several `set-cookie` headers are joined by newlines. */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

export interface OutboundResponse {
  status: number;
  contentType: string | null;
  body: string;
  /** The body was longer than maxBodyBytes. */
  truncated: boolean;
}

/** Reads at most `max` bytes of a response body while it streams, then stops reading. */
async function readCapped(body: ReadableStream<Uint8Array> | null, max: number) {
  const { bytes, truncated } = await readCappedBytes(body, max);
  return { text: new TextDecoder().decode(bytes), truncated };
}

async function readCappedBytes(body: ReadableStream<Uint8Array> | null, max: number) {
  if (!body) return { bytes: Buffer.alloc(0), truncated: false };
  const reader = body.getReader();
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
  return { bytes: Buffer.concat(chunks), truncated };
}

/**
 * The one client for outbound HTTP a tenant can aim (tool requests, callbacks): http/https only; no private
 * addresses unless the deployment allows them, checked on the address the connection is made to (a name is
 * resolved once, at connect, so a DNS answer cannot change between the check and the connection); no
 * redirects followed; time and body size capped while streaming.
 */
export function createOutboundClient(settings: { allowPrivate: boolean; resolve?: Resolver }) {
  const resolve = settings.resolve ?? systemResolver;

  // net.connect's lookup hook: the addresses it returns are the ones connected to.
  const guardedLookup = (
    hostname: string,
    options: { all?: boolean },
    callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    publicAddresses(hostname, resolve).then(
      (addresses) =>
        options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family),
      (err: Error) => callback(err, ''),
    );
  };
  const dispatcher = new Agent(settings.allowPrivate ? {} : { connect: { lookup: guardedLookup } });

  /** One request, redirects not followed, to an address checked when the connection is made. */
  async function send(
    url: string,
    init: { method: string; headers?: Record<string, string>; body?: string | Uint8Array },
    limits: OutboundLimits,
  ) {
    const checked = parseOutboundUrl(url, settings.allowPrivate);
    try {
      return await fetch(checked, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(limits.timeoutMs),
        dispatcher,
      });
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof BlockedAddressError) throw cause;
      throw err;
    }
  }

  return {
    /** Throws BlockedAddressError when the service must not call this URL as its name resolves now (an early
     * answer for a caller; the connection itself is checked again). */
    check: (url: string): Promise<URL> => assertPublicUrl(url, settings.allowPrivate, resolve),
    /** Parses an http(s) URL and checks an IP-literal host, without resolving a name. */
    parse: (url: string): URL => parseOutboundUrl(url, settings.allowPrivate),

    async request(
      url: string,
      init: { method: string; headers?: Record<string, string>; body?: string },
      limits: OutboundLimits,
    ): Promise<OutboundResponse> {
      const res = await send(url, init, limits);
      const { text, truncated } = await readCapped(
        res.body as ReadableStream<Uint8Array> | null,
        limits.maxBodyBytes,
      );
      return { status: res.status, contentType: res.headers.get('content-type'), body: text, truncated };
    },

    /** Like request, with a binary body in and out and every response header (a browser page's requests). */
    async requestBytes(
      url: string,
      init: { method: string; headers?: Record<string, string>; body?: Uint8Array },
      limits: OutboundLimits,
    ): Promise<OutboundBytesResponse> {
      const res = await send(url, init, limits);
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        if (name !== 'set-cookie') headers[name] = value;
      });
      const cookies = res.headers.getSetCookie();
      if (cookies.length) headers['set-cookie'] = cookies.join('\n');
      const { bytes, truncated } = await readCappedBytes(
        res.body as ReadableStream<Uint8Array> | null,
        limits.maxBodyBytes,
      );
      return { status: res.status, headers, body: bytes, truncated };
    },

    close: () => dispatcher.close(),
  };
}

export type OutboundClient = ReturnType<typeof createOutboundClient>;
