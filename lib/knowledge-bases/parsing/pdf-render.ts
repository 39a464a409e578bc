import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { errorMessage } from './structured';
import { ParseError } from './types';

/** Longest side of a rendered page: legible for a vision model, and bounded in memory (~13 MB of pixels)
 * whatever page size the PDF declares. */
const MAX_SIDE_PX = 1800;
/** 144 dpi for ordinary page sizes. */
const PREFERRED_SCALE = 2;

type CanvasModule = typeof import('@napi-rs/canvas');
let canvasModule: CanvasModule | null | undefined;

/** The native canvas is optional at install time (prebuilt per platform): without it scans cannot be read. */
function loadCanvas(): CanvasModule | null {
  if (canvasModule === undefined) {
    try {
      canvasModule = require('@napi-rs/canvas') as CanvasModule; // eslint-disable-line @typescript-eslint/no-require-imports -- optional native module
    } catch {
      canvasModule = null;
    }
  }
  return canvasModule;
}

/** Renders one page to PNG offline (pdf.js onto a Skia canvas) and frees the pixels before returning. */
export async function renderPage(page: PDFPageProxy, fileName: string): Promise<Uint8Array> {
  const canvasLib = loadCanvas();
  if (!canvasLib) {
    throw new ParseError(
      `${fileName} has pages without text (scanned) and this server cannot render PDF pages; upload a PDF with a text layer or the pages as images`,
    );
  }
  const base = page.getViewport({ scale: 1 });
  const scale = Math.min(PREFERRED_SCALE, MAX_SIDE_PX / Math.max(base.width, base.height, 1));
  const viewport = page.getViewport({ scale });
  const canvas = canvasLib.createCanvas(
    Math.max(1, Math.ceil(viewport.width)),
    Math.max(1, Math.ceil(viewport.height)),
  );
  try {
    const context = canvas.getContext('2d');
    // Scans are often transparent where paper would be: paint it white so the model sees dark on light.
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    await page.render({
      canvas: canvas as never,
      canvasContext: context as never,
      viewport,
    }).promise;
    return new Uint8Array(await canvas.encode('png'));
  } catch (err) {
    if (err instanceof ParseError) throw err;
    throw new ParseError(
      `${fileName}: a page could not be rendered (${errorMessage(err)}); the PDF may be damaged`,
    );
  } finally {
    // Releases the pixel buffer now rather than whenever the garbage collector sees the canvas.
    canvas.width = 0;
    canvas.height = 0;
  }
}
