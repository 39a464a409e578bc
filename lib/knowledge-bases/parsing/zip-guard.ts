import { inflateRawSync } from 'node:zlib';
import { limitExceeded, ZIP_RATIO_GRACE_BYTES } from './limits';
import { ParseError, type ParseLimits } from './types';

/**
 * Checks a zip container (DOCX) before any library inflates it. The library (mammoth, through JSZip) inflates
 * whole entries into memory with no bound, so a 119 KB file whose document.xml inflates to 42 MB became gigabytes
 * of DOM. Here, from the central directory: the entry count, the declared uncompressed sizes and each entry's
 * compression ratio; then every entry is inflated once with zlib capped at its declared size (an entry that
 * lies about its size fails instead of growing), and XML parts are refused when they carry a DTD (Office never
 * writes one; its entity definitions are how "billion laughs" expands). Only then may the library read it.
 */
export function checkZip(bytes: Uint8Array, fileName: string, limits: ParseLimits): void {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const directory = readDirectory(buf, fileName, limits);
  let total = 0;
  for (const entry of directory) {
    total += entry.size;
    if (total > limits.maxZipBytes) {
      throw limitExceeded('maxZipBytes', fileName, 'its zip entries inflate to more than the limit', limits);
    }
    if (entry.size > ZIP_RATIO_GRACE_BYTES && entry.size > entry.compressed * limits.maxZipRatio) {
      throw limitExceeded(
        'maxZipRatio',
        fileName,
        `${entry.name} inflates ${Math.round(entry.size / Math.max(entry.compressed, 1))} times its compressed size ` +
          `(${entry.size.toLocaleString('en-US')} bytes)`,
        limits,
      );
    }
  }
  for (const entry of directory) checkEntry(buf, entry, fileName);
}

/** A local file header first: what every zip starts with. */
export function isZip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressed: number;
  size: number;
  offset: number;
}

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const MAX32 = 0xffffffff;

function damaged(fileName: string, why: string): ParseError {
  return new ParseError(
    `${fileName} could not be read: the file is damaged (${why}); open and re-save it, then upload it again`,
  );
}

function readDirectory(buf: Buffer, fileName: string, limits: ParseLimits): Entry[] {
  // The end record sits in the last 22 bytes plus a comment of up to 64 KB.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw damaged(fileName, 'its zip directory is missing');
  let count = buf.readUInt16LE(eocd + 10);
  let offset = buf.readUInt32LE(eocd + 16);
  if ((count === 0xffff || offset === MAX32) && eocd >= 20 && buf.readUInt32LE(eocd - 20) === ZIP64_LOCATOR) {
    const at = safeNumber(buf.readBigUInt64LE(eocd - 12));
    if (at + 56 > buf.length || buf.readUInt32LE(at) !== ZIP64_EOCD)
      throw damaged(fileName, 'bad zip64 record');
    count = safeNumber(buf.readBigUInt64LE(at + 32));
    offset = safeNumber(buf.readBigUInt64LE(at + 48));
  }
  if (count > limits.maxZipEntries) {
    throw limitExceeded(
      'maxZipEntries',
      fileName,
      `its zip has ${count.toLocaleString('en-US')} entries`,
      limits,
    );
  }
  const entries: Entry[] = [];
  let p = offset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== CENTRAL) throw damaged(fileName, 'bad zip directory');
    const nameLength = buf.readUInt16LE(p + 28);
    const extraLength = buf.readUInt16LE(p + 30);
    const entry: Entry = {
      name: buf.toString('utf8', p + 46, p + 46 + nameLength),
      flags: buf.readUInt16LE(p + 8),
      method: buf.readUInt16LE(p + 10),
      compressed: buf.readUInt32LE(p + 20),
      size: buf.readUInt32LE(p + 24),
      offset: buf.readUInt32LE(p + 42),
    };
    readZip64Extra(buf.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength), entry);
    entries.push(entry);
    p += 46 + nameLength + extraLength + buf.readUInt16LE(p + 32);
  }
  return entries;
}

/** Sizes and offsets too big for 32 bits are 0xFFFFFFFF in the directory, the real values in extra field 1. */
function readZip64Extra(extra: Buffer, entry: Entry): void {
  for (let i = 0; i + 4 <= extra.length;) {
    const id = extra.readUInt16LE(i);
    const length = extra.readUInt16LE(i + 2);
    if (id === 0x0001) {
      let at = i + 4;
      const next = () => {
        const value = at + 8 <= extra.length ? safeNumber(extra.readBigUInt64LE(at)) : MAX32;
        at += 8;
        return value;
      };
      if (entry.size === MAX32) entry.size = next();
      if (entry.compressed === MAX32) entry.compressed = next();
      if (entry.offset === MAX32) entry.offset = next();
      return;
    }
    i += 4 + length;
  }
}

/** Anything past 2^53 is as good as infinite here (and over every limit). */
function safeNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

const DTD_MARKERS = ['<!DOCTYPE', '<!ENTITY'].flatMap((m) => [
  Buffer.from(m, 'latin1'),
  Buffer.from(m, 'utf16le'),
]);

function checkEntry(buf: Buffer, entry: Entry, fileName: string): void {
  if (entry.flags & 1) {
    throw new ParseError(`${fileName} is encrypted (${entry.name}); remove the password and upload it again`);
  }
  const p = entry.offset;
  if (p + 30 > buf.length || buf.readUInt32LE(p) !== LOCAL)
    throw damaged(fileName, `bad entry ${entry.name}`);
  const start = p + 30 + buf.readUInt16LE(p + 26) + buf.readUInt16LE(p + 28);
  const data = buf.subarray(start, start + entry.compressed);
  if (data.length !== entry.compressed) throw damaged(fileName, `${entry.name} is cut short`);
  let content: Buffer;
  if (entry.method === 0) {
    if (entry.compressed !== entry.size) throw damaged(fileName, `${entry.name} has inconsistent sizes`);
    content = data;
  } else if (entry.method === 8) {
    try {
      // Never more than the declared size: an entry that would inflate further fails here.
      content = inflateRawSync(data, { maxOutputLength: Math.max(entry.size, 1) });
    } catch {
      throw damaged(fileName, `${entry.name} does not inflate to its declared ${entry.size} bytes`);
    }
    if (content.length !== entry.size) {
      throw damaged(fileName, `${entry.name} does not inflate to its declared ${entry.size} bytes`);
    }
  } else {
    throw new ParseError(
      `${fileName} uses a zip compression method (${entry.method}) that cannot be read; re-save it in Word`,
    );
  }
  if (/\.(xml|rels)$/i.test(entry.name) && DTD_MARKERS.some((m) => content.includes(m))) {
    throw new ParseError(
      `${fileName}: ${entry.name} declares a DTD (<!DOCTYPE> or <!ENTITY>), which Office documents never contain ` +
        'and whose entities could expand without bound; the file is refused',
    );
  }
}
