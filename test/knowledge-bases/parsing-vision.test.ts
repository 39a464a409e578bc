import { expect } from 'chai';
import OpenAI from 'openai';
import { ParseError, createVisionReader, parseDocument } from '@lib/knowledge-bases/parsing';
import { lastUserImageUrls, startScriptedLlm, type ScriptedLlm } from '@test/helpers/llm';
import { makePng, makeScannedPdf } from '@test/knowledge-bases/parsing-fixtures';

describe('createVisionReader against an OpenAI-compatible server', () => {
  let llm: ScriptedLlm;
  let client: OpenAI;

  before(async () => {
    llm = await startScriptedLlm();
  });
  beforeEach(() => {
    llm.reset();
    client = new OpenAI({ baseURL: llm.baseURL, apiKey: llm.apiKey, maxRetries: 0 });
  });
  after(() => llm.close());

  it('sends the image as a data URL with transcription rules and the file instructions', async () => {
    llm.enqueue({ content: 'Invoice 42\nTotal: 100 EUR' });
    const png = await makePng();
    const read = createVisionReader(client, 'vision-model');
    const text = await read({ bytes: png, mimeType: 'image/png', instructions: 'Keep currency codes' });
    expect(text).to.equal('Invoice 42\nTotal: 100 EUR');
    const [request] = llm.chatRequests;
    expect(request?.model).to.equal('vision-model');
    expect(lastUserImageUrls(request!)).to.deep.equal([
      `data:image/png;base64,${Buffer.from(png).toString('base64')}`,
    ]);
    const system = request!.messages.find((m) => m.role === 'system')?.content as string;
    expect(system).to.match(/transcri/i);
    expect(system).to.include('Keep currency codes');
  });

  it('leaves out the instructions section when the file has none', async () => {
    await createVisionReader(client, 'm')({ bytes: await makePng(), mimeType: 'image/png' });
    const system = llm.chatRequests[0]!.messages.find((m) => m.role === 'system')?.content as string;
    expect(system).not.to.include("file's owner");
  });

  it('reads an image file and a scanned PDF end to end through parseDocument', async () => {
    llm.setDefault((body) => ({
      content: lastUserImageUrls(body).length === 1 ? 'Page text from the model' : '',
    }));
    const vision = createVisionReader(client, 'vision-model');
    const image = await parseDocument({
      fileName: 'receipt.webp',
      bytes: await makePng(),
      strategy: 'auto',
      vision,
    });
    expect(image.segments).to.deep.equal([{ text: 'Page text from the model' }]);
    const pdf = await parseDocument({
      fileName: 'scan.pdf',
      bytes: await makeScannedPdf(2),
      strategy: 'auto',
      vision,
    });
    expect(pdf.segments.map((s) => s.page)).to.deep.equal([1, 2]);
    const urls = llm.chatRequests.flatMap((r) => lastUserImageUrls(r));
    expect(urls).to.have.length(3);
    expect(urls.slice(1).every((u) => u.startsWith('data:image/png;base64,iVBORw0KGgo'))).to.equal(true);
  });

  it('turns a refused request (4xx other than 408/409/429) into a ParseError', async () => {
    for (const status of [400, 401, 404, 422]) {
      llm.enqueue({ error: { status, message: 'image format not supported' } });
      const err = await createVisionReader(
        client,
        'm',
      )({ bytes: await makePng(), mimeType: 'image/png' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `status ${status}`).to.be.instanceOf(ParseError);
      expect((err as Error).message).to.include(`HTTP ${status}`);
    }
  });

  it('throws a plain (retryable) error for transient failures', async () => {
    for (const status of [408, 409, 429, 500, 503]) {
      llm.enqueue({ error: { status, message: 'try later' } });
      const err = await createVisionReader(
        client,
        'm',
      )({ bytes: await makePng(), mimeType: 'image/png' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `status ${status}`).to.be.instanceOf(Error).and.not.be.instanceOf(ParseError);
    }
  });

  it('returns an empty string when the model finds nothing, which parseDocument reports as no text', async () => {
    llm.enqueue({ content: '' });
    const vision = createVisionReader(client, 'm');
    const outcome = await parseDocument({
      fileName: 'blank.png',
      bytes: await makePng(),
      strategy: 'auto',
      vision,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(outcome).to.be.instanceOf(ParseError);
    expect((outcome as Error).message).to.include('contains no readable text');
  });
});
