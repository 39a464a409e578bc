// Hostile files for the parse budget tests (issue 32), generated here so each shows what it is made of.
import { makeZip, type ZipEntry } from './zip';

const CONTENT_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ' +
  'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" ' +
  'Target="word/document.xml"/></Relationships>';

/** word/document.xml with `prolog` before the root element and `body` as the text of one paragraph. */
export function documentXml(body: string, prolog = ''): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>${prolog}<w:document xmlns:w="http://schemas.openxmlformats.org/` +
    `wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>${body}</w:t></w:r></w:p></w:body></w:document>`
  );
}

/** A minimal DOCX: content types, the package relationship and `document` as word/document.xml. */
export function makeRawDocx(document: string, extra: ZipEntry[] = []): Buffer {
  return makeZip([
    { name: '[Content_Types].xml', data: CONTENT_TYPES },
    { name: '_rels/.rels', data: RELS },
    { name: 'word/document.xml', data: document },
    ...extra,
  ]);
}

/** The DOCX of the issue: about 40 KB whose document.xml inflates to 42 MB. */
export function docxBomb(): Buffer {
  return makeRawDocx(documentXml('lol '.repeat(10_500_000)));
}

/** Nine levels of entities, each ten of the one below: 10^9 "lol"s once expanded. */
export function billionLaughs(root: string): string {
  const levels = Array.from(
    { length: 9 },
    (_, i) => `<!ENTITY lol${i + 1} "${`&${i === 0 ? 'lol' : `lol${i}`};`.repeat(10)}">`,
  );
  return `<!DOCTYPE ${root} [<!ENTITY lol "lol">${levels.join('')}]>`;
}

/** A DOCX whose document.xml declares the billion-laughs entities and uses the top one. */
export function docxLaughs(): Buffer {
  return makeRawDocx(documentXml('&lol9;', billionLaughs('w:document')));
}

/** A zip (DOCX) of `count` tiny entries. */
export function docxOfManyEntries(count: number): Buffer {
  const parts = Array.from({ length: count }, (_, i) => ({ name: `word/media/p${i}.xml`, data: '<a/>' }));
  return makeRawDocx(documentXml('many parts'), parts);
}

/** A PDF written by hand (objects numbered from 1, a correct xref table); object 1 is the catalog. */
function pdfOf(objects: string[]): Buffer {
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, 'latin1'));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('');
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const HELLO = '<< /Length 44 >>\nstream\nBT /F1 12 Tf 20 100 Td (Hello pages) Tj ET\nendstream';

/** A PDF of `count` empty pages (a few dozen bytes each): 6,000 pages in about 300 KB. */
export function pdfOfPages(count: number): Buffer {
  const kids = Array.from({ length: count }, (_, i) => `${i + 3} 0 R`).join(' ');
  const page = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>';
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`,
    ...Array.from({ length: count }, () => page),
  ]);
}

/** A one-page PDF whose page dictionary holds an array nested `depth` levels deep. */
export function pdfNested(depth: number): Buffer {
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Deep ${'['.repeat(depth)}${']'.repeat(depth)} >>`,
    HELLO,
  ]);
}

/** A one-page PDF that reads "Hello pages". */
export function pdfHello(): Buffer {
  return pdfNested(1);
}

/** JSON nested `depth` levels, with a leaf at every level: its path: value text grows with depth squared. */
export function deepJson(depth: number): string {
  return '{"k":"v","n":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** A CSV whose long column names are repeated on every value of every row: a few MB become gigabytes of text. */
export function amplifyingCsv(columns: number, rows: number): string {
  const header = Array.from({ length: columns }, (_, i) => `column ${i} ${'x'.repeat(200)}`).join(',');
  const row = Array.from({ length: columns }, () => '1').join(',');
  return `${header}\n${Array.from({ length: rows }, () => row).join('\n')}\n`;
}
