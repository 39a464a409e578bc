import { expect } from 'chai';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { lastUserImageUrls } from '@test/helpers/llm';
import { createKb, search, settled, uploadFile } from '@test/helpers/kb';
import { makeDocx, makePdf, makePng } from '@test/knowledge-bases/parsing-fixtures';

// Each supported family of formats through the whole path: signed upload, ingestion workflow, real parser,
// local embedder, vector store, search.
describe('knowledge bases: formats through the whole path', function () {
  this.timeout(180_000);
  const suite = useWorkerAndOrg('KB Formats Org');

  it('finds a PDF passage by meaning with the pages it spans', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const pdf = await makePdf([
      'Chapter one introduces the building and its history since 1920.',
      'The heating system is a gas boiler serviced every autumn by a licensed engineer.',
      'Parking spaces are assigned by the caretaker on request.',
    ]);
    const file = await uploadFile(env, org, kb, 'handbook.pdf', pdf, 'application/pdf');
    expect(await settled(env, org, kb, file.fileId)).to.include({ status: 'READY', pageCount: 3 });
    const hits = await search(env, org, kb, 'who services the boiler', '&limit=1');
    expect(hits).to.have.length(1);
    expect(hits[0]!.text).to.contain('gas boiler');
    // Three short pages make one chunk: the hit carries the range of pages it spans.
    expect(hits[0]!.pages).to.equal('1-3');
  });

  it('reads DOCX, CSV and JSON, and narrows a search with filePattern', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const docx = await uploadFile(
      env,
      org,
      kb,
      'travel.docx',
      await makeDocx(),
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    const csv = await uploadFile(
      env,
      org,
      kb,
      'staff.csv',
      'name,role\nAda,engineer\nGrace,admiral\n',
      'text/csv',
    );
    const json = await uploadFile(
      env,
      org,
      kb,
      'config.json',
      '{"backup":{"schedule":"nightly at 2am"}}',
      'application/json',
    );
    for (const f of [docx, csv, json])
      expect((await settled(env, org, kb, f.fileId)).status).to.equal('READY');
    expect((await search(env, org, kb, 'flight class for employees'))[0]!.fileName).to.equal('travel.docx');
    expect((await search(env, org, kb, 'Grace admiral role'))[0]!.text).to.contain('role: admiral');
    const onlyJson = await search(env, org, kb, 'flight class for employees', '&filePattern=*.JSON');
    expect(onlyJson.map((h) => h.fileName)).to.deep.equal(['config.json']);
    expect(await search(env, org, kb, 'anything', '&filePattern=*.xlsx')).to.deep.equal([]);
  });

  it('reads an image through the vision model, with the file’s instructions', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    env.llm.on(
      { model: env.config.kb.visionModel },
      { content: 'Fire exit plan: assemble at the north car park.' },
    );
    const file = await uploadFile(env, org, kb, 'exits.png', await makePng(), 'image/png', {
      customInstructions: 'Name the assembly point.',
    });
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');
    const asked = env.llm.chatRequests.filter((r) => lastUserImageUrls(r).length > 0);
    expect(asked).to.have.length(1);
    expect(lastUserImageUrls(asked[0]!)[0]).to.match(/^data:image\/png;base64,/);
    expect(JSON.stringify(asked[0]!.messages)).to.contain('Name the assembly point.');
    expect((await search(env, org, kb, 'where do we gather in a fire'))[0]!.text).to.contain(
      'north car park',
    );
  });

  it('ends corrupt, encrypted-looking and mislabelled files in ERROR with a reason', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const corrupt = await uploadFile(
      env,
      org,
      kb,
      'broken.pdf',
      '%PDF-1.7 this is not really a pdf',
      'application/pdf',
    );
    const badJson = await uploadFile(env, org, kb, 'bad.json', '{"unclosed": ', 'application/json');
    const failedPdf = await settled(env, org, kb, corrupt.fileId);
    expect(failedPdf.status).to.equal('ERROR');
    expect(failedPdf.statusMessage).to.contain('broken.pdf');
    const failedJson = await settled(env, org, kb, badJson.fileId);
    expect(failedJson.status).to.equal('ERROR');
    expect(failedJson.statusMessage).to.contain('not valid JSON');
  });
});
