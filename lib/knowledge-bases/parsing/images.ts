import { startsWith } from './documents';
import { ParseError, type ParsedDocument, type VisionReader } from './types';

const SIGNATURES: Record<string, (b: Uint8Array) => boolean> = {
  'image/png': (b) => startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  'image/jpeg': (b) => startsWith(b, [0xff, 0xd8, 0xff]),
  'image/gif': (b) => startsWith(b, [0x47, 0x49, 0x46, 0x38]),
  // RIFF....WEBP
  'image/webp': (b) => startsWith(b, [0x52, 0x49, 0x46, 0x46]) && startsWith(b, [0x57, 0x45, 0x42, 0x50], 8),
};

/** The MIME type the bytes really are, so a model is never sent a mislabelled image (it would reject it). */
export function sniffImageType(bytes: Uint8Array): string | null {
  for (const [mime, matches] of Object.entries(SIGNATURES)) if (matches(bytes)) return mime;
  return null;
}

/** An image's text, read by the vision model. */
export async function readImage(
  bytes: Uint8Array,
  fileName: string,
  vision: VisionReader,
  instructions: string | undefined,
): Promise<ParsedDocument> {
  const mimeType = sniffImageType(bytes);
  if (!mimeType) {
    throw new ParseError(
      `${fileName} is not a PNG, JPEG, GIF or WebP image (the file is damaged or of another type)`,
    );
  }
  const text = (await vision({ bytes, mimeType, instructions })).trim();
  return { segments: text ? [{ text }] : [] };
}
