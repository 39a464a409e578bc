import { ParseError, type ParseLimits } from './types';

export const DEFAULT_PARSE_LIMITS: Readonly<ParseLimits> = {
  timeoutMs: 300_000,
  maxHeapMb: 512,
  maxTextChars: 20_000_000,
  maxPdfPages: 5000,
  maxXmlDepth: 100,
  maxZipEntries: 10_000,
  maxZipBytes: 200 * 1024 * 1024,
  maxZipRatio: 100,
};

export const LIMIT_VARIABLES: Readonly<Record<keyof ParseLimits, string>> = {
  timeoutMs: 'KB_PARSE_TIMEOUT_MS',
  maxHeapMb: 'KB_PARSE_MAX_HEAP_MB',
  maxTextChars: 'KB_PARSE_MAX_TEXT_CHARS',
  maxPdfPages: 'KB_PDF_MAX_PAGES',
  maxXmlDepth: 'KB_XML_MAX_DEPTH',
  maxZipEntries: 'KB_ZIP_MAX_ENTRIES',
  maxZipBytes: 'KB_ZIP_MAX_UNCOMPRESSED_BYTES',
  maxZipRatio: 'KB_ZIP_MAX_RATIO',
};

const UNITS: Readonly<Record<keyof ParseLimits, string>> = {
  timeoutMs: ' ms',
  maxHeapMb: ' MB',
  maxTextChars: ' characters',
  maxPdfPages: ' pages',
  maxXmlDepth: ' levels',
  maxZipEntries: ' entries',
  maxZipBytes: ' bytes',
  maxZipRatio: ' times',
};

/** Small entries compress far better than big ones (a few KB of repeated styles); the ratio applies above this,
 * as Apache POI's zip-bomb check does. */
export const ZIP_RATIO_GRACE_BYTES = 1024 * 1024;

/**
 * A file over one of the parse limits. A ParseError (never retried: the same file goes over the same limit
 * again); the message names the limit and its variable, since that is what an operator would raise.
 */
export class LimitExceeded extends ParseError {
  constructor(
    readonly limit: keyof ParseLimits,
    message: string,
  ) {
    super(message);
    this.name = 'LimitExceeded';
  }
}

/** `<file>: <what>; the limit is <value> (<VARIABLE>). …` */
export function limitExceeded(
  limit: keyof ParseLimits,
  fileName: string,
  what: string,
  limits: ParseLimits,
): LimitExceeded {
  return new LimitExceeded(
    limit,
    `${fileName}: ${what}; the limit is ${limits[limit].toLocaleString('en-US')}${UNITS[limit]} (${LIMIT_VARIABLES[limit]}). ` +
      'Split or simplify the file and upload it again',
  );
}

/** Counts the characters a parser writes and stops it as soon as the file's text is over the budget, so an
 * amplifying input (a CSV whose long header names repeat on every value) never builds its whole output. */
export class TextBudget {
  private used = 0;

  constructor(
    private readonly fileName: string,
    private readonly limits: ParseLimits,
  ) {}

  add(chars: number): void {
    this.used += chars;
    if (this.used > this.limits.maxTextChars) {
      throw limitExceeded('maxTextChars', this.fileName, 'its text is longer than the limit', this.limits);
    }
  }
}
