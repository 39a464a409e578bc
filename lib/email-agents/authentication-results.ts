/*
 * Authentication-Results (RFC 8601): what a receiving relay found when it checked SPF, DKIM and DMARC. Anyone
 * can write this header into a message, so only instances whose authserv-id names a relay the operator trusts
 * (INBOUND_TRUSTED_RELAYS) count; such a relay removes instances claiming its own id before adding its own
 * (RFC 8601 section 5), so one present after it is its word.
 */

/** One `method=result` of a header, with its properties (`header.from`, `smtp.mailfrom`, …), lower-cased. */
export interface AuthResult {
  method: string;
  result: string;
  props: Record<string, string>;
}

export interface AuthResultsHeader {
  authservId: string;
  results: AuthResult[];
}

/** A header longer than this is not a relay's (a few hundred bytes in practice): it is ignored, unparsed. */
const MAX_HEADER_CHARS = 8192;
/**
 * Instances read, from the top: the relay that hands mail to the listener adds its header above every earlier
 * one (RFC 8601 section 5), so its own is among the first; a sender's thousands below it cost nothing.
 */
const MAX_INSTANCES = 20;

/** The text with comments (nested parentheses, RFC 5322 CFWS) blanked out; quoted strings are kept. */
function withoutComments(text: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && (quoted || depth > 0)) {
      if (depth === 0) out += c + (text[i + 1] ?? '');
      i++;
    } else if (quoted) {
      out += c;
      if (c === '"') quoted = false;
    } else if (c === '(') depth++;
    else if (c === ')' && depth > 0) {
      depth--;
      if (depth === 0) out += ' ';
    } else if (depth === 0) {
      out += c;
      if (c === '"') quoted = true;
    }
  }
  return out;
}

/** Splits on `sep` outside quoted strings. */
function splitOutsideQuotes(text: string, sep: RegExp): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && quoted) {
      current += c + (text[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (!quoted && sep.test(c)) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

const unquote = (value: string) =>
  value.startsWith('"') && value.endsWith('"') && value.length >= 2
    ? value.slice(1, -1).replace(/\\(.)/g, '$1')
    : value;

/** One resinfo: `dmarc=pass (p=reject) header.from=example.com` → method, result and properties. */
function parseResult(text: string): AuthResult | null {
  // CFWS is allowed around `=`, `/` and `.` of a resinfo: close it up so each token is one word (runs of
  // white space collapsed first, so neither pattern backtracks over them).
  const tight = text
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/ ?([=/.]) ?/g, '$1');
  // `tight` is trimmed and its white space single: no token is empty, and there is always a first one.
  const [spec, ...rest] = splitOutsideQuotes(tight, /\s/);
  const m = /^([a-z0-9_-]+)(?:\/[0-9]+)?=([a-z0-9_-]+)$/i.exec(spec!);
  if (!m) return null;
  const props: Record<string, string> = {};
  for (const token of rest) {
    const eq = token.indexOf('=');
    if (eq <= 0) continue;
    props[token.slice(0, eq).toLowerCase()] = unquote(token.slice(eq + 1)).toLowerCase();
  }
  return { method: m[1]!.toLowerCase(), result: m[2]!.toLowerCase(), props };
}

/** Parses one header value (after `Authentication-Results:`); null when it is not one. */
export function parseAuthenticationResults(value: string): AuthResultsHeader | null {
  if (value.length > MAX_HEADER_CHARS) return null;
  const [head, ...resinfos] = splitOutsideQuotes(withoutComments(value.replace(/\r?\n[ \t]/g, ' ')), /;/);
  const id = splitOutsideQuotes(head!, /\s/).filter(Boolean)[0];
  if (!id) return null;
  const results = resinfos.map(parseResult).filter((r): r is AuthResult => r !== null);
  return { authservId: unquote(id).toLowerCase(), results };
}

/**
 * Whether trusted relays found DMARC to pass for `fromDomain`: at least one trusted instance says
 * `dmarc=pass header.from=<fromDomain>` and none says anything else for that domain (a relay that does not
 * strip forged instances would otherwise let a forged pass stand beside its own fail). Returns why not.
 */
export function trustedDmarcPass(
  values: string[],
  trustedRelays: readonly string[],
  fromDomain: string,
): { pass: true } | { pass: false; reason: string } {
  const verdicts: string[] = [];
  for (const value of values.slice(0, MAX_INSTANCES)) {
    const header = parseAuthenticationResults(value);
    if (!header || !trustedRelays.includes(header.authservId)) continue;
    for (const r of header.results)
      if (r.method === 'dmarc' && r.props['header.from'] === fromDomain) verdicts.push(r.result);
  }
  if (verdicts.length && verdicts.every((v) => v === 'pass')) return { pass: true };
  const found = verdicts.filter((v) => v !== 'pass')[0];
  return {
    pass: false,
    reason: found
      ? `dmarc=${found} for the From domain from a trusted relay`
      : 'no dmarc=pass for the From domain from a trusted relay (INBOUND_TRUSTED_RELAYS)',
  };
}
