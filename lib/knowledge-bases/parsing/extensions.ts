import { extensions as mimeExtensions, lookup } from 'mime-types';
import { FORMATS, formatFor } from './formats';

/** Every supported extension (lower-case, with the dot), in the order the spec lists them. */
export const SUPPORTED_EXTENSIONS: readonly string[] = FORMATS.flatMap((f) => Object.keys(f.types));

/** `Report.PDF` → `.pdf`; '' when the name has no extension (a leading dot, as in `.env`, is not one). */
export function fileExtension(fileName: string): string {
  const base = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot).toLowerCase() : '';
}

export function isSupportedFile(fileName: string): boolean {
  return formatFor(fileExtension(fileName)) !== undefined;
}

/** Generic labels clients send when they do not know better; they say nothing against the extension. */
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', 'application/unknown']);

/**
 * Whether a declared content type fits the file's extension: one the format lists, one the MIME database maps
 * to or from the extension, or a generic one. A mismatch (an image/png `.pdf`) is worth a 400 at upload-url
 * time, because the stored object would carry a wrong Content-Type for good.
 */
export function isPlausibleContentType(fileName: string, contentType: string): boolean {
  const extension = fileExtension(fileName);
  const format = formatFor(extension);
  if (!format) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (GENERIC_TYPES.has(type) || format.types[extension]?.includes(type)) return true;
  const bare = extension.slice(1);
  return lookup(bare) === type || (mimeExtensions[type] ?? []).includes(bare);
}
