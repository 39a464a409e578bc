import { createHash } from 'node:crypto';
import { extension as extensionOf } from 'mime-types';
import { AppError, badRequest } from '@lib/errors';

/** What a client (or an agent) sends as a version's content: UTF-8 text, or any bytes as base64. */
export interface ContentInput {
  contentType: string;
  content?: string;
  contentBase64?: string;
}

export interface VersionContent {
  bytes: Buffer;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `text/html; charset=utf-8` → `text/html`. */
export function mediaType(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase();
}

export const isHtml = (contentType: string) => mediaType(contentType) === 'text/html';

export const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The bytes of a version, checked: exactly one of content and contentBase64, at most `maxBytes`. */
export function decodeContent(input: ContentInput, maxBytes: number): VersionContent {
  const given = [input.content, input.contentBase64].filter((c) => c !== undefined).length;
  if (given !== 1) throw badRequest('give the content as exactly one of content (text) and contentBase64');
  let bytes: Buffer;
  if (input.content !== undefined) {
    bytes = Buffer.from(input.content, 'utf8');
  } else {
    const text = input.contentBase64!;
    // Node decodes anything, skipping what is not base64: only well-formed input is taken.
    if (text.length % 4 !== 0 || !BASE64.test(text))
      throw badRequest('contentBase64 is not valid base64 (standard alphabet, padded)');
    bytes = Buffer.from(text, 'base64');
  }
  if (bytes.length > maxBytes) {
    throw new AppError(
      413,
      'payload_too_large',
      `an artifact version may have at most ${maxBytes} bytes; this one has ${bytes.length}`,
    );
  }
  return {
    bytes,
    contentType: normalizeContentType(input.contentType),
    sizeBytes: bytes.length,
    sha256: sha256Hex(bytes),
  };
}

/** The media type lower-cased, its parameters kept as given (`Text/HTML; charset=UTF-8` → `text/html; charset=UTF-8`). */
export function normalizeContentType(contentType: string): string {
  const [type, ...params] = contentType.split(';');
  const media = type!.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(media))
    throw badRequest(`contentType '${contentType}' is not a MIME type such as text/html`);
  const rest = params.map((p) => p.trim()).filter(Boolean);
  // The type becomes the stored object's Content-Type header: control or non-ASCII characters cannot go there.
  if (rest.some((p) => /[^\x20-\x7e]/.test(p)))
    throw badRequest('contentType parameters may hold only printable ASCII characters');
  return [media, ...rest].join('; ');
}

/** Trimmed display name of 1 to 500 characters. */
export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 500)
    throw badRequest(`name must be 1 to 500 characters after trimming; got ${trimmed.length}`);
  return trimmed;
}

/** Where a version's bytes live. */
export function versionKey(organizationId: string, artifactId: string, versionId: string) {
  return `artifacts/${organizationId}/${artifactId}/${versionId}`;
}

/**
 * A file name for the artifact's bytes: its name made safe, with the extension its content type implies
 * (`Q3 report` as text/markdown → `Q3_report.md`; a name that already ends so is kept).
 */
export function fileNameFor(name: string, contentType: string): string {
  const safe =
    name
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^[._]+/, '')
      .slice(0, 120) || 'artifact';
  const ext = extensionOf(mediaType(contentType));
  if (!ext || safe.toLowerCase().endsWith(`.${ext}`)) return safe;
  return `${safe}.${ext}`;
}
