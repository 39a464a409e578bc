import { dirname, join } from 'node:path';

type Pdfjs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let pdfjs: Promise<Pdfjs> | undefined;

/**
 * pdf.js is an ES module; it is loaded on first use (most workers never see a PDF) and once per process.
 * The legacy build: it is the one pdf.js supports on Node.
 */
export function loadPdfjs(): Promise<Pdfjs> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjs;
}

/**
 * pdf.js's own font and CMap data, read from the installed package (never fetched): standard fonts are needed
 * to render pages that use the 14 base fonts, CMaps to extract text in CJK encodings.
 */
export function pdfjsAssetUrl(folder: 'standard_fonts' | 'cmaps'): string {
  const root = dirname(require.resolve('pdfjs-dist/package.json'));
  // In Node pdf.js reads these with fs from a path; it must end with a separator.
  return `${join(root, folder)}/`;
}
