import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { limitExceeded, type TextBudget } from './limits';
import { renderPage } from './pdf-render';
import { errorMessage } from './structured';
import { tidyText } from './text';
import {
  ParseError,
  type ParsedDocument,
  type ParseLimits,
  type TextSegment,
  type VisionReader,
} from './types';
import { loadPdfjs, pdfjsAssetUrl } from './pdfjs';

/** How pages are read: only their text layer, only by the vision model, or the text layer with the model
 * reading the pages that have none (scans). */
export type PdfMode = 'text' | 'vision' | 'auto';

export interface PdfOptions {
  fileName: string;
  mode: PdfMode;
  vision: VisionReader;
  instructions?: string;
  limits: ParseLimits;
  budget: TextBudget;
}

/** Work on one page (or on opening the file) that takes longer than this means a pathological file. */
const STEP_TIMEOUT_MS = 60_000;

/**
 * Reads a PDF page by page: each page's text (or its rendering, read by the vision model) becomes one
 * segment with its 1-based page number, and the page's resources are released before the next, so memory
 * stays flat however long the document is.
 */
export async function parsePdf(bytes: Uint8Array, opts: PdfOptions): Promise<ParsedDocument> {
  const { fileName } = opts;
  if (!hasPdfHeader(bytes)) {
    throw new ParseError(`${fileName} is not a PDF file (the file is damaged or of another type)`);
  }
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    // pdf.js takes ownership of (detaches) the buffer it is given, and refuses Node Buffers: hand it a plain
    // copy (`Buffer#slice` would not copy).
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    standardFontDataUrl: pdfjsAssetUrl('standard_fonts'),
    cMapUrl: pdfjsAssetUrl('cmaps'),
    cMapPacked: true,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  try {
    const pdf = await step(task.promise, fileName, 'open').catch((err: unknown) => {
      throw openError(err, fileName);
    });
    // The count the file declares, read before any page: more pages than this is not a document to index page
    // by page (and would take hours through a model).
    if (pdf.numPages > opts.limits.maxPdfPages) {
      throw limitExceeded(
        'maxPdfPages',
        fileName,
        `it has ${pdf.numPages.toLocaleString('en-US')} pages`,
        opts.limits,
      );
    }
    const segments = await readPages(pdf, opts);
    if (segments.length === 0) throw noTextError(fileName, opts.mode);
    return { segments, pageCount: pdf.numPages };
  } finally {
    await task.destroy();
  }
}

async function readPages(pdf: PDFDocumentProxy, opts: PdfOptions): Promise<TextSegment[]> {
  const segments: TextSegment[] = [];
  for (let pageNumber = 1; pageNumber <= pdf.numPages; pageNumber++) {
    const page = await step(pdf.getPage(pageNumber), opts.fileName, `page ${pageNumber}`);
    try {
      const text = await readPage(page, pageNumber, opts);
      opts.budget.add(text.length);
      if (text) segments.push({ text, page: pageNumber });
    } finally {
      // Drops the page's parsed operators, fonts and images; without this a long PDF grows without bound.
      page.cleanup();
    }
  }
  return segments;
}

async function readPage(page: PDFPageProxy, pageNumber: number, opts: PdfOptions): Promise<string> {
  if (opts.mode !== 'vision') {
    const content = await step(page.getTextContent(), opts.fileName, `page ${pageNumber}`);
    const text = tidyText(
      content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join(''),
    );
    if (text || opts.mode === 'text') return text;
    // A page without text is a scan only if it paints an image; a blank page is not worth a model call.
    if (!(await step(paintsImage(page), opts.fileName, `page ${pageNumber}`))) return '';
  }
  const png = await step(renderPage(page, opts.fileName), opts.fileName, `page ${pageNumber}`);
  const text = await opts.vision({ bytes: png, mimeType: 'image/png', instructions: opts.instructions });
  return tidyText(text);
}

async function paintsImage(page: PDFPageProxy): Promise<boolean> {
  const { OPS } = await loadPdfjs();
  const imageOps = new Set<number>([
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintImageMaskXObject,
    OPS.paintImageXObjectRepeat,
    OPS.paintInlineImageXObjectGroup,
    OPS.paintImageMaskXObjectGroup,
    OPS.paintImageMaskXObjectRepeat,
  ]);
  const operators = await page.getOperatorList();
  return operators.fnArray.some((fn) => imageOps.has(fn));
}

/** A PDF may have a little junk before `%PDF-` (readers accept up to 1 KB of it, so does pdf.js). */
function hasPdfHeader(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString('latin1');
  return head.includes('%PDF-');
}

function openError(err: unknown, fileName: string): Error {
  if (err instanceof ParseError) return err;
  const name = err instanceof Error ? err.name : '';
  if (name === 'PasswordException') {
    return new ParseError(
      `${fileName} is password-protected; remove the password (or upload an unprotected copy) and upload it again`,
    );
  }
  if (name === 'InvalidPDFException') {
    return new ParseError(`${fileName} is damaged and cannot be read as a PDF; upload an intact copy`);
  }
  return new ParseError(`${fileName} could not be read as a PDF (${errorMessage(err)})`);
}

function noTextError(fileName: string, mode: PdfMode): ParseError {
  if (mode === 'text') {
    return new ParseError(
      `${fileName} has no text layer (it may be scanned); use the llm-vision or auto parse strategy to read it`,
    );
  }
  return new ParseError(`${fileName} contains no readable text`);
}

/**
 * Bounds one step of pdf.js work. pdf.js runs its parser on the event loop in small asynchronous steps, so the
 * timer fires on a file whose structure makes a step loop or crawl; the caller then destroys the document.
 */
async function step<T>(promise: Promise<T>, fileName: string, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new ParseError(
            `${fileName}: reading ${what} took longer than ${STEP_TIMEOUT_MS / 1000} s; the PDF is probably damaged`,
          ),
        ),
      STEP_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
