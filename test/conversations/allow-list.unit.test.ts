import { expect } from 'chai';
import fc from 'fast-check';
import { hostAllowed } from '@lib/browser-sessions/allow-list';

/*
 * The browse tool's allowedHosts (docs/agents.md "Browser sessions"): exact names, and `*.example.org` for any subdomain
 * of example.org — a whole label more, never the bare domain and never a name that merely ends in the same
 * letters. Case-insensitive, a trailing dot ignored.
 */

/** The reference: compares labels, not text. */
function reference(host: string, allowed: string[]): boolean {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase().split('.');
    if (pattern[0] !== '*') return labels.join('.') === pattern.join('.');
    const suffix = pattern.slice(1);
    return (
      labels.length > suffix.length &&
      labels.slice(labels.length - suffix.length).join('.') === suffix.join('.')
    );
  });
}

describe('browser allow-list (allowedHosts)', () => {
  it('lets a wildcard reach subdomains only, never the bare domain or a look-alike', () => {
    const allowed = ['*.example.com', 'shop.example.org'];
    for (const host of ['a.example.com', 'deep.a.example.com', 'A.Example.COM', 'a.example.com.'])
      expect(hostAllowed(host, allowed), host).to.equal(true);
    for (const host of ['example.com', 'badexample.com', 'a.badexample.com', 'example.com.evil.net', 'com'])
      expect(hostAllowed(host, allowed), host).to.equal(false);
    expect(hostAllowed('shop.example.org', allowed)).to.equal(true);
    expect(hostAllowed('x.shop.example.org', allowed)).to.equal(false);
    expect(hostAllowed('example.org', allowed)).to.equal(false);
    expect(hostAllowed('anything.example.com', [])).to.equal(false);
  });

  it('agrees with a label-by-label reference on random names (fast-check)', () => {
    const label = fc.constantFrom('example', 'badexample', 'Example', 'com', 'org', 'a', 'shop', 'xexample');
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((ls) => ls.join('.'));
    const host = fc.tuple(name, fc.boolean()).map(([n, dot]) => (dot ? `${n}.` : n));
    const entry = fc.tuple(name, fc.boolean()).map(([n, wild]) => (wild ? `*.${n}` : n));
    fc.assert(
      fc.property(host, fc.array(entry, { maxLength: 3 }), (h, allowed) => {
        expect(hostAllowed(h, allowed), `${h} on ${JSON.stringify(allowed)}`).to.equal(reference(h, allowed));
      }),
      { numRuns: 500 },
    );
  });

  it('compares an IPv6 address without the brackets a URL puts around it', () => {
    // URL.hostname keeps the brackets (`http://[::1]:8080/` → `[::1]`); an allow-list entry names the address.
    expect(hostAllowed(new URL('http://[::1]:8080/').hostname, ['::1'])).to.equal(true);
    expect(hostAllowed('[2001:db8::1]', ['2001:DB8::1'])).to.equal(true);
    expect(hostAllowed('[2001:db8::1]', ['2001:db8::2'])).to.equal(false);
  });
});
