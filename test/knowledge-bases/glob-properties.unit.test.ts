import { expect } from 'chai';
import fc from 'fast-check';
import { compileGlob } from '@lib/patterns/glob';

/*
 * compileGlob (a knowledge-base search's filePattern) against a plain backtracking matcher written from the
 * documented grammar: `*` any run of characters but `/` (`**` the same), `?` one character but `/`, `[ab]`,
 * `[a-b]`, `[!ab]`, `\x` x itself, one level of `{a,b}`; case-insensitive. Inputs stay tiny, so backtracking
 * is cheap here.
 */

type Token = { star: true } | { any: true } | { set: string; negated: boolean } | { char: string };

function tokens(pattern: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) out.push({ char: pattern[++i]! });
    else if (c === '*') out.push({ star: true });
    else if (c === '?') out.push({ any: true });
    else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      let body = pattern.slice(i + 1, close);
      const negated = body.startsWith('!');
      if (negated) body = body.slice(1);
      // spell out ranges: a-c → abc
      const set = body.replace(/(.)-(.)/g, (_, a: string, b: string) => {
        let s = '';
        for (let k = a.charCodeAt(0); k <= b.charCodeAt(0); k++) s += String.fromCharCode(k);
        return s;
      });
      out.push({ set, negated });
      i = close;
    } else out.push({ char: c });
  }
  return out;
}

function match(ts: Token[], name: string): boolean {
  if (!ts.length) return name.length === 0;
  const [t, ...rest] = ts as [Token, ...Token[]];
  if ('star' in t) {
    for (let k = 0; k <= name.length; k++) {
      if (match(rest, name.slice(k))) return true;
      if (name[k] === '/') return false;
    }
    return false;
  }
  if (!name.length) return false;
  const c = name[0]!;
  const ok =
    'any' in t ? c !== '/' : 'set' in t ? c !== '/' && t.set.includes(c) !== t.negated : t.char === c;
  return ok && match(rest, name.slice(1));
}

function reference(pattern: string, name: string): boolean {
  const p = pattern.toLowerCase();
  const open = p.indexOf('{');
  const close = p.indexOf('}', open);
  const alternatives =
    open >= 0 && close > open
      ? p
          .slice(open + 1, close)
          .split(',')
          .map((alt) => p.slice(0, open) + alt + p.slice(close + 1))
      : [p];
  return alternatives.some((alt) => match(tokens(alt), name.toLowerCase()));
}

describe('glob patterns against a backtracking reference (fast-check)', () => {
  const piece = fc.constantFrom('a', 'b', 'A', '.', '/', '*', '**', '?', '[ab]', '[a-c]', '[!a]', '\\*', 'x');
  const pattern = fc
    .tuple(fc.array(piece, { maxLength: 6 }), fc.option(fc.constantFrom('{a,b}', '{.x,}', '{A,*}')))
    .map(([ps, braces]) => {
      if (!braces) return ps.join('');
      const at = ps.length ? ps.length - 1 : 0;
      return [...ps.slice(0, at), braces, ...ps.slice(at)].join('');
    });
  const name = fc
    .array(fc.constantFrom('a', 'b', 'B', 'c', '.', '/', '*', 'x'), { maxLength: 8 })
    .map((cs) => cs.join(''));

  it('matches exactly the names the reference matches', () => {
    fc.assert(
      fc.property(pattern, fc.array(name, { minLength: 1, maxLength: 8 }), (p, names) => {
        const isMatch = compileGlob(p);
        for (const n of names) expect(isMatch(n), `${p} on ${n}`).to.equal(reference(p, n));
      }),
      { numRuns: 1000 },
    );
  });
});
