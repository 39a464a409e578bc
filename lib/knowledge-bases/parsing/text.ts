import { ParseError } from './types';

/** Share of control characters above which bytes are taken for binary, not text with a few stray bytes. */
const MAX_CONTROL_SHARE = 0.02;
/** Only the start is inspected for junk: enough to tell binary from text without scanning huge files. */
const SNIFF_CHARS = 64 * 1024;

/**
 * Decodes a text file's bytes: honours a UTF-8 or UTF-16 byte-order mark (and drops it), reads UTF-8, and
 * falls back to Windows-1252 for legacy 8-bit files (common for CSVs exported from spreadsheets) rather than
 * failing them. Bytes that are clearly binary (NUL bytes, many control characters) are a ParseError, so a
 * renamed image or archive never ends up as garbage text in the index.
 */
export function decodeText(bytes: Uint8Array, fileName: string): string {
  const text = decodeWithBom(bytes) ?? decodeUtf8OrLegacy(bytes);
  if (looksBinary(text)) {
    throw new ParseError(
      `${fileName} does not contain text (it looks like binary data); check that the file and its extension match`,
    );
  }
  return text;
}

function decodeWithBom(bytes: Uint8Array): string | null {
  const [a, b, c] = bytes;
  if (a === 0xef && b === 0xbb && c === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (a === 0xff && b === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (a === 0xfe && b === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return null;
}

function decodeUtf8OrLegacy(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return decodeWindows1252(bytes);
  }
}

/** Windows-1252's 0x80–0x9F (€, curly quotes, dashes…); undefined codes stay C1 controls, as browsers do. */
const CP1252_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008dŽ\u008f\u0090‘’“”•–—˜™š›œ\u009džŸ';

/**
 * Spelled out because TextDecoder('windows-1252') depends on the node build: Node 20's decodes 0x80–0x9F as
 * ISO-8859-1 controls (Node 24's maps them as here).
 */
function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b >= 0x80 && b < 0xa0 ? CP1252_HIGH[b - 0x80] : String.fromCharCode(b);
  return out;
}

function looksBinary(text: string): boolean {
  const sample = text.length > SNIFF_CHARS ? text.slice(0, SNIFF_CHARS) : text;
  if (sample.includes('\u0000')) return true;
  let control = 0;
  for (let i = 0; i < sample.length; i++) {
    const code = sample.charCodeAt(i);
    // Tab, line feed, form feed and carriage return are ordinary in text files.
    if (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0c && code !== 0x0d) control++;
  }
  return sample.length > 0 && control / sample.length > MAX_CONTROL_SHARE;
}

/** Normalises line ends and trims trailing spaces so equal content gives equal text (and equal chunks). */
export function tidyText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
