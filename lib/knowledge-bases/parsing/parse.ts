import { SUPPORTED_EXTENSIONS, fileExtension } from './extensions';
import { checkStrategy, formatFor } from './formats';
import { DEFAULT_PARSE_LIMITS, TextBudget } from './limits';
import { tidyText } from './text';
import { ParseError, type ParsedDocument, type ParseInput } from './types';
import { checkZip, isZip } from './zip-guard';

/**
 * Turns an uploaded file into text segments, by its extension and the parse strategy:
 * - `auto`: each format's best reading (PDF text layer with scanned pages read by the vision model; images by
 *   the vision model; DOCX, HTML, CSV, JSON and XML as readable text);
 * - `text`: text only, no model (images are refused, scanned PDF pages yield nothing);
 * - `raw`: a text file's decoded bytes with no format processing (binary formats are refused);
 * - `llm-vision`: every PDF page and image through the vision model; text formats, which a vision model
 *   cannot see, are read as with `auto`.
 * Anything that cannot be read is a ParseError whose message tells the user what to do; a file over one of
 * `input.limits` is a LimitExceeded naming the limit. This runs inside the parse sandbox (sandbox.ts), which
 * also bounds its memory and time.
 */
export async function parseDocument(input: ParseInput): Promise<ParsedDocument> {
  const { fileName, bytes, strategy } = input;
  const format = formatFor(fileExtension(fileName));
  if (!format) {
    throw new ParseError(
      `${fileName}: unsupported file type; supported extensions are ${SUPPORTED_EXTENSIONS.join(', ')}`,
    );
  }
  checkStrategy(format, strategy, fileName);
  if (bytes.length === 0)
    throw new ParseError(`${fileName} is empty; upload the file again with its content`);
  const limits = input.limits ?? DEFAULT_PARSE_LIMITS;
  // Other bytes are left to the format's reader, which says what they are not.
  if (format.container === 'zip' && isZip(bytes)) checkZip(bytes, fileName, limits);
  const parsed = await format.parse({
    fileName,
    bytes,
    strategy,
    vision: input.vision,
    instructions: input.customInstructions?.trim() || undefined,
    limits,
    budget: new TextBudget(fileName, limits),
  });
  // Formats whose library writes the whole text at once (DOCX, HTML, plain text) are counted here.
  new TextBudget(fileName, limits).add(parsed.segments.reduce((n, s) => n + s.text.length, 0));
  // Raw means the bytes as they are; every other strategy normalises whitespace so equal content chunks equally.
  const segments = parsed.segments
    .map((s) => (strategy === 'raw' ? s : { ...s, text: tidyText(s.text) }))
    .filter((s) => s.text.trim() !== '');
  if (segments.length === 0) {
    throw new ParseError(`${fileName} contains no readable text; check the file's content`);
  }
  return { ...parsed, segments };
}
