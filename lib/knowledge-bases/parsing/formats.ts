import type { TextBudget } from './limits';
import type { PdfMode } from './pdf';
import { decodeText } from './text';
import {
  ParseError,
  type ParsedDocument,
  type ParseLimits,
  type ParseStrategy,
  type VisionReader,
} from './types';

export interface FormatContext {
  fileName: string;
  bytes: Uint8Array;
  strategy: ParseStrategy;
  vision: VisionReader;
  instructions?: string;
  limits: ParseLimits;
  /** What the format's text writer counts its output against. */
  budget: TextBudget;
}

/**
 * One supported file format. `kind` decides what the strategies mean for it:
 * - `text`: a text file (raw gives its decoded text, every other strategy its format-aware text);
 * - `binary-document`: a format that needs a library to read (raw is refused);
 * - `paged`: PDF, read page by page (text layer, vision model, or both);
 * - `image`: only a vision model can read it.
 */
export interface FormatSpec {
  name: string;
  /** Each extension (lower-case, with the dot) with the content types a client plausibly declares for it
   * (besides what the MIME database maps to). */
  types: Readonly<Record<string, readonly string[]>>;
  kind: 'text' | 'binary-document' | 'paged' | 'image';
  /** A zip-based format: checked by zip-guard.ts before its library inflates anything. */
  container?: 'zip';
  parse(ctx: FormatContext): Promise<ParsedDocument>;
}

const whole = (text: string): ParsedDocument => ({ segments: text.trim() ? [{ text }] : [] });

type ToText = (text: string, fileName: string, ctx: FormatContext) => string;

/** A text format: decoded, then turned into readable text by `toText` (except for the raw strategy). */
function textFormat(name: string, types: Record<string, string[]>, toText: () => ToText): FormatSpec {
  return {
    name,
    types,
    kind: 'text',
    parse: (ctx) => {
      const text = decodeText(ctx.bytes, ctx.fileName);
      return Promise.resolve(whole(ctx.strategy === 'raw' ? text : toText()(text, ctx.fileName, ctx)));
    },
  };
}

// The parsers' libraries load on a format's first parse: the API, which only checks names and types against
// this registry, never loads them (they weigh tens of MB). `require` caches each module after the first call.
/* eslint-disable @typescript-eslint/no-require-imports */
const structured = () => require('./structured') as typeof import('./structured');
const documents = () => require('./documents') as typeof import('./documents');
const pdf = () => require('./pdf') as typeof import('./pdf');
const images = () => require('./images') as typeof import('./images');
/* eslint-enable @typescript-eslint/no-require-imports */
const asIs = () => (text: string) => text;

const PDF_MODES: Record<ParseStrategy, PdfMode> = {
  auto: 'auto',
  text: 'text',
  'llm-vision': 'vision',
  raw: 'text',
};

/** The one registry of supported formats: extensions, plausible MIME types and how each is parsed. */
export const FORMATS: readonly FormatSpec[] = [
  {
    name: 'PDF',
    types: { '.pdf': ['application/pdf', 'application/x-pdf'] },
    kind: 'paged',
    parse: ({ bytes, fileName, strategy, vision, instructions, limits, budget }) =>
      pdf().parsePdf(bytes, {
        fileName,
        mode: PDF_MODES[strategy],
        vision,
        instructions,
        limits,
        budget,
      }),
  },
  {
    name: 'image',
    types: {
      '.png': ['image/png'],
      '.jpg': ['image/jpeg', 'image/pjpeg', 'image/jpg'],
      '.jpeg': ['image/jpeg', 'image/pjpeg', 'image/jpg'],
      '.gif': ['image/gif'],
      '.webp': ['image/webp'],
    },
    kind: 'image',
    parse: ({ bytes, fileName, vision, instructions }) =>
      images().readImage(bytes, fileName, vision, instructions),
  },
  textFormat('plain text', { '.txt': ['text/plain'] }, asIs),
  textFormat('Markdown', { '.md': ['text/markdown', 'text/x-markdown', 'text/plain'] }, asIs),
  // Windows browsers label .csv files with the Excel type.
  textFormat(
    'CSV',
    { '.csv': ['text/csv', 'application/csv', 'application/vnd.ms-excel', 'text/plain'] },
    () => structured().csvToText,
  ),
  textFormat(
    'JSON',
    { '.json': ['application/json', 'text/json', 'text/plain'] },
    () => structured().jsonToText,
  ),
  textFormat('XML', { '.xml': ['application/xml', 'text/xml', 'text/plain'] }, () => structured().xmlToText),
  textFormat(
    'HTML',
    { '.html': ['text/html', 'application/xhtml+xml'] },
    () => (text) => documents().htmlToText(text),
  ),
  {
    name: 'Word document',
    types: { '.docx': ['application/vnd.openxmlformats-officedocument.wordprocessingml.document'] },
    kind: 'binary-document',
    container: 'zip',
    parse: async ({ bytes, fileName }) => whole(await documents().docxToText(bytes, fileName)),
  },
];

export function formatFor(extension: string): FormatSpec | undefined {
  return FORMATS.find((f) => Object.hasOwn(f.types, extension));
}

/** What a strategy means for a format before any byte is read; throws when the pair makes no sense. */
export function checkStrategy(format: FormatSpec, strategy: ParseStrategy, fileName: string): void {
  if (format.kind === 'image' && (strategy === 'text' || strategy === 'raw')) {
    throw new ParseError(
      `${fileName} is an image: images need the llm-vision or auto parse strategy (this file's is ${strategy})`,
    );
  }
  if (strategy === 'raw' && format.kind !== 'text') {
    throw new ParseError(
      `${fileName} is a ${format.name}, which cannot be read raw; use the auto or text parse strategy`,
    );
  }
}
