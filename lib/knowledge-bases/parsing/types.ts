/** How a file's bytes become text. `auto` picks by extension; see parse.ts. */
export type ParseStrategy = 'auto' | 'llm-vision' | 'text' | 'raw';

/** A run of text, with the 1-based page it came from when the format has pages (PDF). */
export interface TextSegment {
  text: string;
  page?: number;
}

export interface ParsedDocument {
  segments: TextSegment[];
  /** number of pages for paged formats */
  pageCount?: number;
}

/** Reads one image (or rendered page) with a vision-capable model and returns its text. */
export type VisionReader = (input: {
  bytes: Uint8Array;
  mimeType: string;
  /** the file's customInstructions, when set */
  instructions?: string;
}) => Promise<string>;

/**
 * The budget one file's parse runs under (issue 32: a tenant's file must never cost more than this). Each field
 * is a config variable (lib/config/, named in `LIMIT_VARIABLES`) so a message about it can name what to raise.
 */
export interface ParseLimits {
  /** Wall-clock time the parse may work, not counting the waits for the vision model. */
  timeoutMs: number;
  /** V8 old-generation heap of the parse process. */
  maxHeapMb: number;
  /** Characters of text a file may yield (all segments together). */
  maxTextChars: number;
  /** Pages of a PDF. */
  maxPdfPages: number;
  /** Nesting of XML elements. */
  maxXmlDepth: number;
  /** Entries in a zip container (DOCX). */
  maxZipEntries: number;
  /** Declared uncompressed size of all a zip's entries together. */
  maxZipBytes: number;
  /** How many times its compressed size an entry may inflate to (entries over ZIP_RATIO_GRACE_BYTES). */
  maxZipRatio: number;
}

export interface ParseInput {
  fileName: string;
  bytes: Uint8Array;
  strategy: ParseStrategy;
  customInstructions?: string | null;
  vision: VisionReader;
  /** The budget (limits.ts); DEFAULT_PARSE_LIMITS when not given. */
  limits?: ParseLimits;
}

/** A file that cannot be parsed as it is (unsupported, empty, encrypted, corrupt). The message is shown to the
 * user as the file's statusMessage, so it says what is wrong and what to do. Never retried. */
export class ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ParseError';
  }
}

export interface Chunk {
  /** 0-based position in the file */
  index: number;
  text: string;
  /** `5` or `5-7`; null for formats without pages */
  pages: string | null;
}
