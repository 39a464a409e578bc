import { expect } from 'chai';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { as } from '@test/helpers/org';
import { createKb, settled, uploadFile } from '@test/helpers/kb';

/** Lines distinct enough to become well over 100 chunks. */
function register(lines: number): string {
  return Array.from(
    { length: lines },
    (_, i) =>
      `Entry ${i} of the caretaker's register: the boiler in flat ${i % 40} was serviced on day ${i % 28} ` +
      `and the reading, number ${i * 11}, went into book ${Math.floor(i / 10)}.`,
  ).join('\n');
}

describe('knowledge base search, as the spec words it', function () {
  this.timeout(300_000);
  const suite = useWorkerAndOrg('KB Search Spec Org');

  it('limit (default 5, capped at 100): a larger limit answers 100 hits in both searches', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'register.txt', register(900));
    const ready = await settled(env, org, kb, file.fileId, 240_000);
    expect(ready.status).to.equal('READY');
    expect(ready.chunkCount).to.be.greaterThan(100);
    const member = as(env, org.chat.token);
    const one = await member.get(org.path(`/knowledgebases/${kb}/search?q=boiler&limit=500`)).expect(200);
    expect(one.body.items).to.have.length(100);
    const all = await member
      .get(org.path(`/knowledgebases/search?q=boiler&limit=500&kbIds=${kb}`))
      .expect(200);
    expect(all.body.items).to.have.length(100);
    const byDefault = await member.get(org.path(`/knowledgebases/${kb}/search?q=boiler`)).expect(200);
    expect(byDefault.body.items).to.have.length(5);
  });

  it('kbOrgs (…; requires kbIds): kbOrgs without kbIds is 400', async () => {
    const { env, org } = suite;
    const res = await as(env, org.chat.token)
      .get(org.path(`/knowledgebases/search?q=boiler&kbOrgs=${org.organizationId}`))
      .expect(400);
    expect(res.body.error.message).to.match(/kbOrgs requires kbIds/);
  });
});
