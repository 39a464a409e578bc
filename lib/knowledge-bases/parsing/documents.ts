import { convert } from 'html-to-text';
import mammoth from 'mammoth';
import { errorMessage } from './structured';
import { ParseError } from './types';

/**
 * HTML to plain text with a real HTML parser: scripts, styles and the head are left out, links keep their
 * words but not their URLs (noise for search), images are dropped, headings keep their case. The parser's
 * limits bound the work on hostile markup (very deep nesting, huge node counts).
 */
export function htmlToText(html: string): string {
  return convert(html, {
    wordwrap: false,
    limits: { maxInputLength: 50_000_000, maxDepth: 500, maxChildNodes: 100_000 },
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'h5', options: { uppercase: false } },
      { selector: 'h6', options: { uppercase: false } },
      { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
    ],
  });
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04];
/** Compound File Binary: what Word writes for old .doc files and for password-protected .docx files. */
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0];

/** A .docx (Office Open XML) document's text, one paragraph per block: headings, paragraphs, list items. */
export async function docxToText(bytes: Uint8Array, fileName: string): Promise<string> {
  if (startsWith(bytes, CFB_MAGIC)) {
    throw new ParseError(
      `${fileName} is password-protected or an old Word (.doc) file; remove the password or save it as .docx and upload it again`,
    );
  }
  if (!startsWith(bytes, ZIP_MAGIC)) {
    throw new ParseError(`${fileName} is not a Word .docx document (the file is damaged or of another type)`);
  }
  try {
    const result = await mammoth.extractRawText({
      buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
    });
    return result.value;
  } catch (err) {
    throw new ParseError(
      `${fileName} could not be read as a Word .docx document (${errorMessage(err)}); open and re-save it in Word, then upload it again`,
    );
  }
}

export function startsWith(bytes: Uint8Array, magic: readonly number[], offset = 0): boolean {
  return magic.every((b, i) => bytes[offset + i] === b);
}
