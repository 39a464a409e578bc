import { expect } from 'chai';
import {
  ParseError,
  parseDocument,
  type ParsedDocument,
  type ParseInput,
} from '@lib/knowledge-bases/parsing';
import { input, makeDocx, makePng, recordingVision, utf8 } from '@test/knowledge-bases/parsing-fixtures';

async function parseError(i: ParseInput): Promise<ParseError> {
  let result: ParsedDocument | undefined;
  try {
    result = await parseDocument(i);
  } catch (err) {
    expect(err).to.be.instanceOf(ParseError);
    return err as ParseError;
  }
  throw new Error(`expected a ParseError, got ${JSON.stringify(result)}`);
}

const textOf = (doc: ParsedDocument) => doc.segments.map((s) => s.text).join('\n\n');

describe('parseDocument: text-like formats', () => {
  it('reads a UTF-8 text file and drops its byte-order mark', async () => {
    const doc = await parseDocument(input('notes.txt', utf8('\ufeffFirst line\r\nSecond – line ✓\r\n')));
    expect(doc.segments).to.deep.equal([{ text: 'First line\nSecond – line ✓' }]);
    expect(doc.pageCount).to.equal(undefined);
  });

  it('reads UTF-16 text with a byte-order mark and legacy Windows-1252 text', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße aus Köln', 'utf16le')]);
    expect(textOf(await parseDocument(input('a.txt', utf16)))).to.equal('Grüße aus Köln');
    const cp1252 = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x80, 0x35]); // "Café €5"
    expect(textOf(await parseDocument(input('b.txt', cp1252)))).to.equal('Café €5');
  });

  it('refuses binary junk in a text file', async () => {
    const err = await parseError(input('photo.txt', await makePng()));
    expect(err.message).to.match(/photo\.txt.*binary/);
  });

  it('keeps Markdown as written', async () => {
    const doc = await parseDocument(input('README.md', utf8('# Title\n\nSome *emphasis* here.\n')));
    expect(textOf(doc)).to.equal('# Title\n\nSome *emphasis* here.');
  });

  it('turns CSV rows into text that keeps the header names', async () => {
    const csv = 'Product,Price,"Stock, units"\nWidget,9.99,12\n"Gadget, large",19.50,\n';
    const text = textOf(await parseDocument(input('stock.csv', utf8(csv))));
    expect(text).to.equal(
      'Product: Widget\nPrice: 9.99\nStock, units: 12\n\nProduct: Gadget, large\nPrice: 19.50',
    );
  });

  it('reads semicolon-separated CSV as exported by spreadsheets in many locales', async () => {
    const text = textOf(await parseDocument(input('eu.csv', utf8('Name;City\nAda;Paris\n'))));
    expect(text).to.equal('Name: Ada\nCity: Paris');
  });

  it('turns JSON into path: value lines', async () => {
    const json = JSON.stringify({ orders: [{ id: 7, customer: { name: 'Ada' }, paid: true, note: null }] });
    const text = textOf(await parseDocument(input('orders.json', utf8(json))));
    expect(text).to.equal('orders[0].id: 7\norders[0].customer.name: Ada\norders[0].paid: true');
  });

  it('survives deeply nested JSON', async () => {
    const deep = '['.repeat(5000) + '"bottom"' + ']'.repeat(5000);
    const text = textOf(await parseDocument(input('deep.json', utf8(deep))));
    expect(text).to.match(/: bottom$/);
  });

  it('refuses invalid JSON with the parser position', async () => {
    const err = await parseError(input('broken.json', utf8('{"a": 1,}')));
    expect(err.message).to.match(/^broken\.json is not valid JSON \(.+\); fix the file/);
  });

  it('turns XML into text with element paths, attributes and decoded entities', async () => {
    const xml = '<?xml version="1.0"?><catalog><book id="b1"><title>Tom &amp; Jerry</title></book></catalog>';
    const text = textOf(await parseDocument(input('books.xml', utf8(xml))));
    expect(text).to.equal('catalog.book.title: Tom & Jerry\ncatalog.book.@id: b1');
  });

  it('refuses malformed XML, naming the line', async () => {
    const err = await parseError(input('bad.xml', utf8('<a>\n<b></a>')));
    expect(err.message).to.match(/^bad\.xml is not valid XML \(line 2: .+\)/);
  });

  it('does not expand an entity bomb ("billion laughs") in XML', async () => {
    const levels = Array.from({ length: 9 }, (_, i) => {
      const ref = i === 0 ? 'lol' : `lol${i}`;
      return `<!ENTITY lol${i + 1} "${`&${ref};`.repeat(10)}">`;
    });
    const xml = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">${levels.join('')}]><lolz>&lol9;</lolz>`;
    const outcome = await parseDocument(input('lol.xml', utf8(xml))).then(textOf, (err: unknown) => err);
    if (typeof outcome === 'string') expect(outcome.length).to.be.below(200_000);
    else expect(outcome).to.be.instanceOf(ParseError);
  });

  it('turns HTML into text without scripts, styles or link targets', async () => {
    const html = `<html><head><title>Ignored</title><style>p { color: red }</style>
      <script>window.secret = "do-not-index"</script></head>
      <body><h1>Opening hours</h1><p>We open at <b>9</b>. See <a href="https://x.test/h">hours</a>.</p>
      <script>track("also-not")</script></body></html>`;
    const text = textOf(await parseDocument(input('page.html', utf8(html))));
    expect(text).to.include('Opening hours');
    expect(text).to.include('We open at 9. See hours.');
    expect(text).not.to.match(/do-not-index|also-not|color: red|x\.test/);
  });

  it('reads a DOCX: headings and paragraphs as separate blocks', async () => {
    const doc = await parseDocument(input('policy.docx', await makeDocx()));
    expect(textOf(doc).split('\n\n')).to.deep.equal([
      'Travel policy',
      'Employees book economy class for flights under six hours.',
      'Expenses',
      'Receipts are submitted within thirty days.',
    ]);
  });

  it('refuses a damaged DOCX and a password-protected (OLE) one with actionable messages', async () => {
    const damaged = (await makeDocx()).slice(0, 2000);
    expect((await parseError(input('cut.docx', damaged))).message).to.match(/cut\.docx could not be read/);
    const ole = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);
    expect((await parseError(input('locked.docx', ole))).message).to.match(/password-protected/);
    expect((await parseError(input('fake.docx', utf8('plain text')))).message).to.match(/not a Word/);
  });
});

describe('parseDocument: errors common to every format', () => {
  it('refuses an unsupported extension and names the supported ones', async () => {
    const err = await parseError(input('archive.zip', utf8('PK')));
    expect(err.message).to.include('unsupported file type');
    expect(err.message).to.include(
      '.pdf, .png, .jpg, .jpeg, .gif, .webp, .txt, .md, .csv, .json, .xml, .html, .docx',
    );
  });

  it('refuses a file without an extension', async () => {
    expect((await parseError(input('README', utf8('hi')))).message).to.include('unsupported file type');
  });

  it('refuses an empty file of any format', async () => {
    for (const name of ['empty.txt', 'empty.pdf', 'empty.docx', 'empty.json']) {
      expect((await parseError(input(name, new Uint8Array()))).message).to.equal(
        `${name} is empty; upload the file again with its content`,
      );
    }
  });

  it('refuses a file whose content is only whitespace', async () => {
    const err = await parseError(input('blank.md', utf8(' \n\n\t \n')));
    expect(err.message).to.include('contains no readable text');
  });
});

describe('parseDocument: strategies', () => {
  it('reads an image with the vision reader in auto and llm-vision, passing customInstructions', async () => {
    const png = await makePng();
    for (const strategy of ['auto', 'llm-vision'] as const) {
      const vision = recordingVision('Invoice 42');
      const doc = await parseDocument({
        ...input('scan.png', png, strategy, vision),
        customInstructions: 'Only the totals',
      });
      expect(doc.segments).to.deep.equal([{ text: 'Invoice 42' }]);
      expect(vision.calls).to.have.length(1);
      expect(vision.calls[0]!.mimeType).to.equal('image/png');
      expect(vision.calls[0]!.instructions).to.equal('Only the totals');
      expect(Buffer.from(vision.calls[0]!.bytes).equals(Buffer.from(png))).to.equal(true);
    }
  });

  it('sends the type the image bytes really have, not the one its extension claims', async () => {
    const vision = recordingVision();
    await parseDocument(input('photo.jpg', await makePng(), 'auto', vision));
    expect(vision.calls[0]!.mimeType).to.equal('image/png');
  });

  it('refuses images under text and raw, and an image that is not one', async () => {
    const png = await makePng();
    for (const strategy of ['text', 'raw'] as const) {
      const vision = recordingVision();
      const err = await parseError(input('scan.png', png, strategy, vision));
      expect(err.message).to.include('images need the llm-vision or auto parse strategy');
      expect(vision.calls).to.have.length(0);
    }
    expect((await parseError(input('fake.webp', utf8('not an image')))).message).to.include('not a PNG');
  });

  it('raw gives a text file as it is, without format processing', async () => {
    const json = '{ "a": [1, 2] }';
    expect(textOf(await parseDocument(input('a.json', utf8(json), 'raw')))).to.equal(json);
    const html = '<p>Hi <script>x()</script></p>';
    expect(textOf(await parseDocument(input('a.html', utf8(html), 'raw')))).to.equal(html);
    // Invalid JSON is still text: raw does not validate the format.
    expect(textOf(await parseDocument(input('b.json', utf8('{oops'), 'raw')))).to.equal('{oops');
  });

  it('raw refuses binary formats', async () => {
    const err = await parseError(input('policy.docx', await makeDocx(), 'raw'));
    expect(err.message).to.match(/cannot be read raw; use the auto or text parse strategy/);
    expect((await parseError(input('a.pdf', utf8('%PDF-1.7'), 'raw'))).message).to.include(
      'cannot be read raw',
    );
  });

  it('text and llm-vision read text formats as auto does', async () => {
    const csv = utf8('a,b\n1,2\n');
    for (const strategy of ['text', 'llm-vision'] as const) {
      const vision = recordingVision();
      expect(textOf(await parseDocument(input('t.csv', csv, strategy, vision)))).to.equal('a: 1\nb: 2');
      expect(vision.calls).to.have.length(0);
    }
  });
});
