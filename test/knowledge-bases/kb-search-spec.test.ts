import { expect } from 'chai';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { addMember, as } from '@test/helpers/org';
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

  it("a member's PERSONAL knowledge base: its creator reads, changes and searches it; another member gets 404", async () => {
    const { env, org } = suite;
    const created = await as(env, org.chat.token)
      .post(org.path('/knowledgebases'), { title: 'My lease', llmDescription: 'mine', type: 'PERSONAL' })
      .expect(201);
    const kb = created.body.knowledgeBaseId as string;
    const owner = as(env, org.chat.token);
    await owner.get(org.path(`/knowledgebases/${kb}`)).expect(200);
    await owner
      .put(org.path(`/knowledgebases/${kb}`), { title: 'Our lease', llmDescription: 'mine' })
      .expect(200);
    const own = await owner.get(org.path(`/knowledgebases/search?q=rent&kbIds=${kb}`)).expect(200);
    expect(own.body).to.deep.equal({ items: [], totalRows: 0, offset: 0 });
    await as(env, org.admin.token)
      .get(org.path(`/knowledgebases/${kb}`))
      .expect(200);

    const other = as(env, (await addMember(env, org.organizationId, 'chat', 'Other Chat')).token);
    const notFound = { code: 'not_found', message: 'knowledge base not found' };
    for (const res of [
      await other.get(org.path(`/knowledgebases/${kb}`)),
      await other.put(org.path(`/knowledgebases/${kb}`), { title: 'Taken', llmDescription: '' }),
      await other.get(org.path(`/knowledgebases/${kb}/search?q=rent`)),
    ]) {
      expect(res.status).to.equal(404);
      expect(res.body.error).to.include(notFound);
    }
    const named = await other.get(org.path(`/knowledgebases/search?q=rent&kbIds=${kb}`)).expect(400);
    expect(named.body.error).to.include({
      code: 'invalid_reference',
      message: `kbIds: ${kb} does not exist or is not visible to you`,
    });
    expect((await owner.get(org.path(`/knowledgebases/${kb}`)).expect(200)).body.title).to.equal('Our lease');
  });

  it('an ORGANIZATION knowledge base: every member reads it, only admins and owners change it', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org, { title: 'Handbook' });
    const member = as(env, org.chat.token);
    await member.get(org.path(`/knowledgebases/${kb}`)).expect(200);
    const refused = await member
      .put(org.path(`/knowledgebases/${kb}`), { title: 'Mine now', llmDescription: '' })
      .expect(403);
    expect(refused.body.error.message).to.equal(
      'changing an organization knowledge base needs the admin or owner role',
    );
    await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}`), { title: 'Staff handbook', llmDescription: '' })
      .expect(200);
    expect((await member.get(org.path(`/knowledgebases/${kb}`)).expect(200)).body.title).to.equal(
      'Staff handbook',
    );
  });
});
