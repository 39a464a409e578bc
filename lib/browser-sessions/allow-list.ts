/** Whether a host is on an allow-list of names and `*.example.com` wildcards (any subdomain, not the bare
 * domain). Case-insensitive; a trailing dot is ignored. */
export function hostAllowed(host: string, allowed: readonly string[]): boolean {
  // Hosts come from `URL.hostname`, which holds brackets only around an IPv6 address.
  const name = host.toLowerCase().replace(/\.$/, '').replace(/[[\]]/g, '');
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern;
  });
}
