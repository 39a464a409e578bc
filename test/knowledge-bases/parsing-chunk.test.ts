import { expect } from 'chai';
import { chunkSegments, type Chunk, type TextSegment } from '@lib/knowledge-bases/parsing';

/** A deterministic text of numbered sentences, so any sentence can be found in the chunks by its number. */
function sentences(count: number, from = 1): string {
  return Array.from(
    { length: count },
    (_, i) => `Sentence ${from + i} talks about item ${(from + i) * 7}.`,
  ).join(' ');
}

/** Removes the overlap between consecutive chunks by finding the longest suffix of a that starts b. */
function overlapOf(a: string, b: string): number {
  for (let n = Math.min(a.length, b.length); n > 0; n--) if (a.endsWith(b.slice(0, n))) return n;
  return 0;
}

describe('chunkSegments', () => {
  it('keeps a short document in one chunk, with no pages for a format without pages', () => {
    expect(chunkSegments([{ text: 'Short note.' }])).to.deep.equal([
      { index: 0, text: 'Short note.', pages: null },
    ]);
  });

  it('gives nothing for no text and never an empty chunk', () => {
    expect(chunkSegments([])).to.deep.equal([]);
    expect(chunkSegments([{ text: '   ' }, { text: '\n\n' }])).to.deep.equal([]);
    const chunks = chunkSegments([{ text: `${'\n'.repeat(50)}word ${' '.repeat(3000)} end` }], {
      size: 100,
      overlap: 20,
    });
    expect(chunks.length).to.be.greaterThan(0);
    for (const c of chunks) expect(c.text.trim()).to.equal(c.text).and.not.equal('');
  });

  it('cuts about `size` characters at sentence ends, never mid-word in prose', () => {
    const text = sentences(200);
    const chunks = chunkSegments([{ text }], { size: 400, overlap: 80 });
    expect(chunks.length).to.be.greaterThan(10);
    chunks.forEach((c, i) => {
      expect(c.index).to.equal(i);
      expect(c.text.length).to.be.at.most(400);
      expect(c.text.length).to.be.at.least(200);
      if (i < chunks.length - 1) expect(c.text).to.match(/\.$/);
      expect(c.text).to.match(/^Sentence|^[a-z0-9]/);
    });
    // Every chunk starts at the start of a word of the original text.
    for (const c of chunks) expect(text.includes(c.text)).to.equal(true);
  });

  it('overlaps consecutive chunks by about `overlap` characters and covers the whole text', () => {
    const text = sentences(120);
    const chunks = chunkSegments([{ text }], { size: 300, overlap: 60 });
    let rebuilt = chunks[0]!.text;
    for (let i = 1; i < chunks.length; i++) {
      const n = overlapOf(chunks[i - 1]!.text, chunks[i]!.text);
      expect(n, `overlap between chunks ${i - 1} and ${i}`).to.be.within(30, 60);
      rebuilt += ' ' + chunks[i]!.text.slice(n).trimStart();
    }
    expect(rebuilt.replace(/\s+/g, ' ')).to.equal(text);
  });

  it('prefers paragraph breaks over sentence ends', () => {
    const para1 = sentences(6);
    const para2 = sentences(6, 7);
    const chunks = chunkSegments([{ text: `${para1}\n\n${para2}` }], { size: para1.length + 60, overlap: 0 });
    expect(chunks.map((c) => c.text)).to.deep.equal([para1, para2]);
  });

  it('cuts text without spaces at the size limit', () => {
    const chunks = chunkSegments([{ text: 'x'.repeat(1000) }], { size: 300, overlap: 50 });
    expect(chunks.map((c) => c.text.length)).to.deep.equal([300, 300, 300, 250]);
  });

  it('names the page or page range each chunk spans', () => {
    const segments: TextSegment[] = [1, 2, 3, 4].map((page) => ({ page, text: sentences(8, page * 100) }));
    const chunks = chunkSegments(segments, { size: 500, overlap: 100 });
    for (const c of chunks) {
      const pages = [1, 2, 3, 4].filter((p) => c.text.includes(`Sentence ${p * 100 + 1} `) || spans(c, p));
      expect(pages.length, c.text).to.be.greaterThan(0);
      const expected = pages.length === 1 ? `${pages[0]}` : `${pages[0]}-${pages[pages.length - 1]}`;
      expect(c.pages).to.equal(expected);
    }
    function spans(c: Chunk, page: number): boolean {
      // A sentence number in page's range (page*100 … page*100+7) appears in the chunk.
      return Array.from({ length: 8 }, (_, i) => page * 100 + i).some((n) =>
        c.text.includes(`Sentence ${n} `),
      );
    }
  });

  it('skips pages without text and keeps pages null when no segment has one', () => {
    const chunks = chunkSegments([
      { text: 'On five.', page: 5 },
      { text: '', page: 6 },
      { text: 'On seven.', page: 7 },
    ]);
    expect(chunks).to.deep.equal([{ index: 0, text: 'On five.\n\nOn seven.', pages: '5-7' }]);
    expect(chunkSegments([{ text: 'a' }, { text: 'b' }])[0]!.pages).to.equal(null);
  });

  it('is deterministic: the same input gives the same chunks', () => {
    const segments = [1, 2, 3].map((page) => ({ page, text: sentences(40, page * 50) }));
    const first = chunkSegments(segments);
    const second = chunkSegments(structuredClone(segments));
    expect(second).to.deep.equal(first);
    expect(first.length).to.be.greaterThan(2);
  });

  it('uses ~1,200 characters and ~200 overlap by default', () => {
    const chunks = chunkSegments([{ text: sentences(300) }]);
    for (const c of chunks.slice(0, -1)) expect(c.text.length).to.be.within(900, 1200);
    const n = overlapOf(chunks[0]!.text, chunks[1]!.text);
    expect(n).to.be.within(150, 200);
  });

  it('rejects a size below 1 and caps the overlap at half a chunk so it always advances', () => {
    expect(() => chunkSegments([{ text: 'a' }], { size: 0 })).to.throw(RangeError);
    const chunks = chunkSegments([{ text: 'y'.repeat(100) }], { size: 10, overlap: 50 });
    expect(chunks.length).to.equal(19);
  });
});
