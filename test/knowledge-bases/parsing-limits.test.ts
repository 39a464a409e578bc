import { expect } from 'chai';
import {
  DEFAULT_PARSE_LIMITS,
  LimitExceeded,
  ParseError,
  ParseSandbox,
  parseDocument,
  type ParsedDocument,
  type ParseLimits,
} from '@lib/knowledge-bases/parsing';
import {
  amplifyingCsv,
  billionLaughs,
  deepJson,
  docxBomb,
  docxLaughs,
  docxOfManyEntries,
  documentXml,
  makeRawDocx,
  pdfHello,
  pdfNested,
  pdfOfPages,
} from '@test/helpers/hostile-files';
import { makePng, recordingVision, utf8 } from '@test/knowledge-bases/parsing-fixtures';

const vision = recordingVision();

async function eventuallyTrue(check: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(check()).to.equal(true);
}

/** What a parse in the sandbox under `limits` ends with: the document, or the error it threw. */
async function sandboxed(
  fileName: string,
  bytes: Uint8Array | string,
  limits: Partial<ParseLimits> = {},
  reader = vision,
): Promise<ParsedDocument | Error> {
  const sandbox = new ParseSandbox({ ...DEFAULT_PARSE_LIMITS, ...limits });
  const data = typeof bytes === 'string' ? utf8(bytes) : bytes;
  return sandbox
    .parse({ fileName, bytes: data, strategy: 'auto', vision: reader })
    .catch((err: Error) => err);
}

function expectLimit(outcome: unknown, limit: keyof ParseLimits, variable: string): void {
  expect(outcome, String(outcome)).to.be.instanceOf(LimitExceeded);
  expect((outcome as LimitExceeded).limit).to.equal(limit);
  expect((outcome as Error).message).to.include(`(${variable})`);
}

describe('parsing under a budget: zip containers', () => {
  it('refuses the DOCX bomb (42 MB of document.xml in 40 KB) by its ratio, before inflating it', async () => {
    const bomb = docxBomb();
    expect(bomb.length).to.be.below(100_000);
    expectLimit(await sandboxed('bomb.docx', bomb), 'maxZipRatio', 'KB_ZIP_MAX_RATIO');
  });

  it('refuses a zip whose entries declare more than KB_ZIP_MAX_UNCOMPRESSED_BYTES', async () => {
    const docx = makeRawDocx(documentXml('words '.repeat(2000)));
    expectLimit(
      await sandboxed('big.docx', docx, { maxZipBytes: 5000 }),
      'maxZipBytes',
      'KB_ZIP_MAX_UNCOMPRESSED_BYTES',
    );
    // The same file under the default limit is read.
    const doc = await sandboxed('big.docx', docx);
    expect((doc as ParsedDocument).segments[0]?.text).to.match(/^words words/);
  });

  it('refuses a zip of more than KB_ZIP_MAX_ENTRIES entries', async () => {
    expectLimit(
      await sandboxed('many.docx', docxOfManyEntries(20_000)),
      'maxZipEntries',
      'KB_ZIP_MAX_ENTRIES',
    );
  });

  it('refuses an entry that inflates past the size its directory declares', async () => {
    const lying = makeRawDocx(documentXml('x'), [
      { name: 'word/extra.xml', data: 'y'.repeat(3_000_000), declaredSize: 1000 },
    ]);
    const outcome = await sandboxed('lying.docx', lying);
    expect(outcome).to.be.instanceOf(ParseError);
    expect((outcome as Error).message).to.match(
      /lying\.docx could not be read: .*word\/extra\.xml does not inflate to its declared 1000 bytes/,
    );
  });

  it('refuses billion-laughs entities inside a DOCX', async () => {
    const outcome = await sandboxed('laughs.docx', docxLaughs());
    expect(outcome).to.be.instanceOf(ParseError);
    expect((outcome as Error).message).to.match(/word\/document\.xml declares a DTD/);
  });

  it('does not read an XLSX at all, billion laughs or not: it is not a supported format', async () => {
    const xlsx = makeRawDocx(documentXml('&lol9;', billionLaughs('worksheet')));
    const outcome = await sandboxed('sheet.xlsx', xlsx);
    expect(outcome).to.be.instanceOf(ParseError);
    expect((outcome as Error).message).to.match(/sheet\.xlsx: unsupported file type/);
  });
});

describe('parsing under a budget: PDF, JSON, XML, CSV', () => {
  it('refuses a PDF of more pages than KB_PDF_MAX_PAGES before reading any', async () => {
    expectLimit(await sandboxed('pages.pdf', pdfOfPages(6000)), 'maxPdfPages', 'KB_PDF_MAX_PAGES');
    const doc = (await sandboxed('pages.pdf', pdfOfPages(3), { maxPdfPages: 3 })) as Error;
    // Three empty pages are within three pages: what stops them is that they hold no text.
    expect(doc.message).to.match(/contains no readable text/);
  });

  it('ends a PDF nested deeper than the parser can follow with a ParseError, not a crash', async () => {
    expect(await sandboxed('hello.pdf', pdfHello())).to.have.nested.property(
      'segments[0].text',
      'Hello pages',
    );
    const outcome = await sandboxed('nested.pdf', pdfNested(100_000));
    expect(outcome).to.be.instanceOf(ParseError);
    expect((outcome as Error).message).to.match(/nested\.pdf is nested too deeply to be read/);
  });

  it('stops deep JSON whose paths make its text grow with the square of the depth at KB_PARSE_MAX_TEXT_CHARS', async () => {
    expectLimit(await sandboxed('deep.json', deepJson(20_000)), 'maxTextChars', 'KB_PARSE_MAX_TEXT_CHARS');
    const shallow = await sandboxed('deep.json', deepJson(50));
    expect((shallow as ParsedDocument).segments[0]?.text).to.include('n.n.k: v');
  });

  it('stops a CSV whose repeated column names amplify it at KB_PARSE_MAX_TEXT_CHARS', async () => {
    const csv = amplifyingCsv(500, 2000);
    expect(csv.length).to.be.below(3_000_000);
    expectLimit(await sandboxed('wide.csv', csv), 'maxTextChars', 'KB_PARSE_MAX_TEXT_CHARS');
    const small = await sandboxed('wide.csv', amplifyingCsv(2, 2));
    expect((small as ParsedDocument).segments[0]?.text).to.match(/^column 0 x+: 1/);
  });

  it('refuses XML nested deeper than KB_XML_MAX_DEPTH', async () => {
    const deep = (n: number) => '<a>'.repeat(n) + 'x' + '</a>'.repeat(n);
    expectLimit(await sandboxed('deep.xml', deep(1000)), 'maxXmlDepth', 'KB_XML_MAX_DEPTH');
    expect(await sandboxed('deep.xml', deep(50))).to.have.nested.property('segments[0].text');
  });

  it('counts every format against KB_PARSE_MAX_TEXT_CHARS, plain text too', async () => {
    expectLimit(
      await sandboxed('long.txt', 'word '.repeat(1000), { maxTextChars: 4000 }),
      'maxTextChars',
      'KB_PARSE_MAX_TEXT_CHARS',
    );
    // parseDocument without a sandbox applies the default limits.
    await parseDocument({
      fileName: 'long.txt',
      bytes: utf8('word '.repeat(1000)),
      strategy: 'auto',
      vision,
    });
  });
});

describe('the parse sandbox', () => {
  it('ends a parse that needs more heap than KB_PARSE_MAX_HEAP_MB, and this process goes on', async () => {
    const json = '[' + '{"a":[]},'.repeat(3_000_000) + '1]';
    expectLimit(
      await sandboxed('objects.json', json, { maxHeapMb: 32, maxTextChars: 1e9 }),
      'maxHeapMb',
      'KB_PARSE_MAX_HEAP_MB',
    );
    // The same process parses the next file as usual.
    expect(await sandboxed('next.json', '{"a": 1}')).to.have.nested.property('segments[0].text', 'a: 1');
  });

  it('stops a parse that works longer than KB_PARSE_TIMEOUT_MS', async () => {
    const json = JSON.stringify(Array.from({ length: 2_000_000 }, (_, i) => i));
    expectLimit(
      await sandboxed('slow.json', json, { timeoutMs: 200, maxTextChars: 1e9 }),
      'timeoutMs',
      'KB_PARSE_TIMEOUT_MS',
    );
  });

  it('calls the vision model from the worker and does not count its wait against the time limit', async function () {
    this.timeout(120_000);
    const slow = recordingVision('text on the photo');
    const reader: typeof slow = Object.assign(
      async (req: Parameters<typeof slow>[0]) => {
        await new Promise((r) => setTimeout(r, 1500));
        return slow(req);
      },
      { calls: slow.calls },
    );
    const doc = await sandboxed('photo.png', await makePng(), { timeoutMs: 1000 }, reader);
    expect(doc).to.have.nested.property('segments[0].text', 'text on the photo');
    expect(slow.calls).to.have.length(1);
    expect(slow.calls[0]?.mimeType).to.equal('image/png');
  });

  it("rethrows the vision model's own error (a refusal stays a ParseError, an outage stays retryable)", async () => {
    const outage = new Error('connect ECONNREFUSED');
    const failing = Object.assign(() => Promise.reject(outage), { calls: [] });
    expect(await sandboxed('photo.png', await makePng(), {}, failing)).to.equal(outage);
  });
  it('parses at most KB_PARSE_CONCURRENCY files at once; the others wait for a free slot', async function () {
    this.timeout(120_000);
    const sandbox = new ParseSandbox(DEFAULT_PARSE_LIMITS, 1);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const seen: string[] = [];
    const reader = Object.assign(
      async ({ instructions }: { instructions?: string }) => {
        seen.push(instructions ?? '');
        if (instructions === 'first') await held;
        return `read ${instructions}`;
      },
      { calls: [] },
    );
    const png = await makePng();
    const parse = (name: string) =>
      sandbox.parse({
        fileName: `${name}.png`,
        bytes: png,
        strategy: 'auto',
        vision: reader,
        customInstructions: name,
      });
    const first = parse('first');
    await eventuallyTrue(() => seen.length === 1);
    const second = parse('second');
    try {
      // The second file waits for the first one's thread to end.
      expect(sandbox.waiting).to.equal(1);
      expect(seen).to.deep.equal(['first']);
    } finally {
      release();
    }
    expect((await first).segments[0]?.text).to.equal('read first');
    expect((await second).segments[0]?.text).to.equal('read second');
    expect(seen).to.deep.equal(['first', 'second']);
  });
});
