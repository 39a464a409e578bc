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

export class BlockedAddressError extends Error {}

/** Throws BlockedAddressError when the URL is not http(s) or its host resolves to a non-public address. */
export async function assertPublicUrl(url: string, allowPrivate: boolean): Promise<URL> {
  const parsed = new URL(url);
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
