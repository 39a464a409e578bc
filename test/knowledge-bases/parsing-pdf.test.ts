import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ParseError, chunkSegments, parseDocument, type ParseInput } from '@lib/knowledge-bases/parsing';
import {
  input,
  makePdf,
  makeScannedPdf,
  recordingVision,
  utf8,
} from '@test/knowledge-bases/parsing-fixtures';
import { ROOT } from '@test/helpers/paths';

async function parseError(i: ParseInput): Promise<ParseError> {
  const outcome = await parseDocument(i).then(
    (doc) => doc,
    (err: unknown) => err,
  );
  expect(outcome).to.be.instanceOf(ParseError);
  return outcome as ParseError;
}

const isPng = (bytes: Uint8Array) => Buffer.from(bytes.subarray(0, 4)).toString('latin1') === '\x89PNG';

describe('parseDocument: PDF', () => {
  it('gives one segment per page with 1-based page numbers', async () => {
    const pdf = await makePdf(['Alpha apples', 'Bravo bananas', 'Charlie cherries']);
    const doc = await parseDocument(input('fruit.pdf', pdf));
    expect(doc.pageCount).to.equal(3);
    expect(doc.segments).to.deep.equal([
      { text: 'Alpha apples', page: 1 },
      { text: 'Bravo bananas', page: 2 },
      { text: 'Charlie cherries', page: 3 },
    ]);
  });

  it('chunks a PDF with page ranges that name exactly the pages each chunk draws from', async () => {
    const words = ['alpha', 'bravo', 'charlie'];
    const pages = words.map((w) => `The ${w} section. ${`Every ${w} item was counted twice. `.repeat(9)}`);
    const doc = await parseDocument(input('minutes.pdf', await makePdf(pages)));
    const chunks = chunkSegments(doc.segments, { size: 500, overlap: 100 });
    for (const chunk of chunks) {
      const seen = words.flatMap((w, i) => (chunk.text.includes(w) ? [i + 1] : []));
      const expected = seen.length === 1 ? `${seen[0]}` : `${seen[0]}-${seen[seen.length - 1]}`;
      expect(chunk.pages, chunk.text).to.equal(expected);
    }
    expect(chunks.map((c) => c.pages)).to.include.members(['1', '1-2', '2-3']);
  });

  it('does not call the vision model for a text PDF or for its blank pages', async () => {
    const vision = recordingVision();
    const doc = await parseDocument(
      input('mixed.pdf', await makePdf(['Intro', null, 'Outro']), 'auto', vision),
    );
    expect(doc.segments).to.deep.equal([
      { text: 'Intro', page: 1 },
      { text: 'Outro', page: 3 },
    ]);
    expect(doc.pageCount).to.equal(3);
    expect(vision.calls).to.have.length(0);
  });

  it('auto reads scanned pages (no text layer) with the vision model on rendered pages', async () => {
    const vision = recordingVision('Scanned words');
    const doc = await parseDocument({
      ...input('scan.pdf', await makeScannedPdf(2), 'auto', vision),
      customInstructions: 'Transcribe handwriting too',
    });
    expect(doc.segments).to.deep.equal([
      { text: 'Scanned words', page: 1 },
      { text: 'Scanned words', page: 2 },
    ]);
    expect(vision.calls).to.have.length(2);
    for (const call of vision.calls) {
      expect(call.mimeType).to.equal('image/png');
      expect(isPng(call.bytes)).to.equal(true);
      expect(call.instructions).to.equal('Transcribe handwriting too');
    }
  });

  it('llm-vision reads every page, text layer or not, through the model', async () => {
    const vision = recordingVision('seen');
    const doc = await parseDocument(input('two.pdf', await makePdf(['One', 'Two']), 'llm-vision', vision));
    expect(doc.segments).to.deep.equal([
      { text: 'seen', page: 1 },
      { text: 'seen', page: 2 },
    ]);
    expect(vision.calls).to.have.length(2);
    expect(vision.calls.every((c) => isPng(c.bytes))).to.equal(true);
  });

  it('text ignores scanned pages and refuses a PDF that has no text layer at all', async () => {
    const vision = recordingVision();
    const err = await parseError(input('scan.pdf', await makeScannedPdf(1), 'text', vision));
    expect(err.message).to.equal(
      'scan.pdf has no text layer (it may be scanned); use the llm-vision or auto parse strategy to read it',
    );
    expect(vision.calls).to.have.length(0);
  });

  it('refuses a password-protected PDF, saying so', async () => {
    const bytes = readFileSync(join(ROOT, 'test/fixtures/kb/encrypted.pdf'));
    const err = await parseError(input('secret.pdf', bytes));
    expect(err.message).to.match(/^secret\.pdf is password-protected; .*unprotected copy/);
  });

  it('refuses a corrupt PDF and a file that is not a PDF', async () => {
    const pdf = await makePdf(['Some text']);
    const truncated = pdf.slice(0, 60);
    expect((await parseError(input('cut.pdf', truncated))).message).to.match(
      /cut\.pdf (is damaged|could not be read)/,
    );
    const notPdf = await parseError(input('letter.pdf', utf8('Dear reader, this is text.')));
    expect(notPdf.message).to.equal('letter.pdf is not a PDF file (the file is damaged or of another type)');
  });

  it('refuses a PDF with no text anywhere', async () => {
    const err = await parseError(input('blank.pdf', await makePdf([null, null])));
    expect(err.message).to.include('contains no readable text');
  });

  it('leaves the caller its bytes (pdf.js would detach the buffer it is given)', async () => {
    const pdf = await makePdf(['Kept']);
    const length = pdf.length;
    await parseDocument(input('keep.pdf', pdf));
    expect(pdf.length).to.equal(length);
    expect((await parseDocument(input('again.pdf', pdf))).segments[0]?.text).to.equal('Kept');
  });
});
