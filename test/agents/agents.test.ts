import { expect } from 'chai';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createKb } from '@test/helpers/kb';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';

const base = { name: 'Helper', description: 'Helps', instructions: 'Be helpful.', model: 'gpt-4o-mini' };

describe('agents', () => {
  let env: TestEnv;
  let org: TestOrg;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Agents Org');
  });

  const create = (body: object, token = org.admin.token) => as(env, token).post(org.path('/agents'), body);
  const names = (res: { body: { items: Array<{ name: string }> } }) => res.body.items.map((a) => a.name);

  it('creates an agent with defaults and reads, replaces and deletes it', async () => {
    const created = await create(base).expect(201);
    expect(created.body).to.deep.include({
      ...base,
      organizationId: org.organizationId,
      creativityScore: '0.4',
      reasoning: 'none',
      visibility: 'private',
      emailAddress: null,
      emailFilters: null,
      emailAttachmentsToKnowledgeBaseId: null,
      emailAttachmentsFileTypeFilter: null,
      emailCcTo: null,
      emailBccTo: null,
      emailReplyTo: null,
    });
    const id = created.body.id;
    expect(id).to.match(/^agt_/);
    const got = await as(env, org.owner.token)
      .get(org.path(`/agents/${id}`))
      .expect(200);
    expect(got.body).to.deep.equal(created.body);

    // Inbound addresses are unique across organizations: each run uses its own.
    const email = {
      emailAddress: `Leasing-${Date.now()}@Agents.Example.test`,
      emailFilters: 'all',
      emailAttachmentsToKnowledgeBaseId: await createKb(env, org),
      emailAttachmentsFileTypeFilter: '.PDF, docx',
      emailCcTo: 'a@example.com , b@example.org',
      emailBccTo: 'c@example.com',
      emailReplyTo: 'replies@example.com',
    };
    const put = await as(env, org.owner.token)
      .put(org.path(`/agents/${id}`), {
        ...base,
        name: 'Renamed',
        creativityScore: '1',
        reasoning: 'high',
        ...email,
      })
      .expect(200);
    expect(put.body).to.deep.include({
      ...email,
      name: 'Renamed',
      creativityScore: '1',
      reasoning: 'high',
      emailAttachmentsFileTypeFilter: 'pdf,docx',
      emailCcTo: 'a@example.com,b@example.org',
    });

    // Optional fields left out keep their value; null and "" clear email fields.
    const kept = await as(env, org.admin.token)
      .put(org.path(`/agents/${id}`), { ...base, emailCcTo: null, emailBccTo: '' })
      .expect(200);
    expect(kept.body).to.deep.include({
      creativityScore: '1',
      reasoning: 'high',
      emailCcTo: null,
      emailBccTo: null,
    });
    expect(kept.body.emailReplyTo).to.equal('replies@example.com');

    const deleted = await as(env, org.admin.token)
      .delete(org.path(`/agents/${id}`))
      .expect(200);
    expect(deleted.body).to.deep.equal({ organizationId: org.organizationId, agentId: id });
    await as(env, org.admin.token)
      .get(org.path(`/agents/${id}`))
      .expect(404);
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${id}`))
      .expect(404);
    await as(env, org.admin.token)
      .put(org.path(`/agents/${id}`), base)
      .expect(404);
  });

  it('rejects invalid fields with 400', async () => {
    const bad = async (patch: object, text: string) => {
      const res = await create({ ...base, ...patch }).expect(400);
      expect(res.body.error.message).to.contain(text);
    };
    // openapi.yaml's patterns state these rules; the validator names the field and the rule it breaks
    await bad({ creativityScore: '1.5' }, 'creativityScore must match pattern');
    await bad({ creativityScore: '-0.1' }, 'creativityScore');
    await bad({ creativityScore: 'high' }, 'creativityScore');
    await bad({ creativityScore: 0.5 }, 'creativityScore');
    await bad({ reasoning: 'extreme' }, 'reasoning');
    await bad({ emailAddress: 'not-an-address' }, 'emailAddress must match pattern');
    await bad({ emailReplyTo: 'x@y' }, 'emailReplyTo must match pattern');
    await bad({ emailCcTo: 'ok@example.com, broken@' }, 'emailCcTo must match pattern');
    await bad({ emailBccTo: 'ok@example.com,,x@example.com' }, 'emailBccTo must match pattern');
    await bad(
      { emailAttachmentsFileTypeFilter: 'pdf, tar.gz' },
      'emailAttachmentsFileTypeFilter must match pattern',
    );
    // Attachments go into a knowledge base of this organization, never another's or none.
    const elsewhere = await createKb(env, await createTestOrg(env, 'KB Elsewhere'));
    for (const kb of ['kb_nope', elsewhere])
      await create({ ...base, emailAttachmentsToKnowledgeBaseId: kb }).expect(
        invalidReference('emailAttachmentsToKnowledgeBaseId'),
      );
    await bad({ model: '' }, 'model');
    await bad({ extra: true }, 'must NOT have additional properties');
    for (const field of ['name', 'description', 'instructions', 'model']) {
      const body: Record<string, unknown> = { ...base };
      delete body[field];
      const post = await create(body).expect(400);
      expect(post.body.error.message).to.contain(field);
      const put = await as(env, org.admin.token).put(org.path('/agents/default-assistant'), body).expect(400);
      expect(put.body.error.message).to.contain(field);
    }
    const ok = await create({ ...base, creativityScore: '0', reasoning: 'low' }).expect(201);
    expect(ok.body).to.include({ creativityScore: '0', reasoning: 'low' });
    await create({ ...base, creativityScore: '1.0' }).expect(201);
  });

  it('keeps an inbound email address unique across agents and organizations', async () => {
    const address = `desk-${Date.now()}@agents.example.test`;
    const first = await create({ ...base, emailAddress: address }).expect(201);
    const res = await create({ ...base, emailAddress: address.toUpperCase() }).expect(409);
    expect(res.body.error.code).to.equal('conflict');
    const other = await createTestOrg(env, 'Other Mail Org');
    await as(env, other.admin.token)
      .post(other.path('/agents'), { ...base, emailAddress: address })
      .expect(409);
    // Saving the agent that owns it is fine.
    await as(env, org.admin.token)
      .put(org.path(`/agents/${first.body.id}`), { ...base, emailAddress: address })
      .expect(200);
  });

  it('gives an inbound address to exactly one of several agents saved at once, and frees it with its agent', async () => {
    const address = `race-${Date.now()}@agents.example.test`;
    const other = await createTestOrg(env, 'Racing Mail Org');
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 2
          ? create({ ...base, emailAddress: address })
          : as(env, other.admin.token).post(other.path('/agents'), { ...base, emailAddress: address }),
      ),
    );
    const statuses = attempts.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([201, 409, 409, 409, 409, 409, 409, 409]);
    const winner = attempts.find((r) => r.status === 201)!;
    const winnerOrg = winner.body.organizationId === org.organizationId ? org : other;
    // Moving the holder to another address frees this one; deleting an agent frees its address.
    await as(env, winnerOrg.admin.token)
      .put(winnerOrg.path(`/agents/${winner.body.id}`), { ...base, emailAddress: `moved-${address}` })
      .expect(200);
    const next = await create({ ...base, emailAddress: address }).expect(201);
    await create({ ...base, emailAddress: `moved-${address}` }).expect(409);
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${next.body.id}`))
      .expect(200);
    await as(env, other.admin.token)
      .post(other.path('/agents'), { ...base, emailAddress: address })
      .expect(201);
  });

  it('pages, filters by name and orders the list', async () => {
    for (const name of ['banana', 'Apple', 'cherry']) await create({ ...base, name }).expect(201);
    const list = (query: string) =>
      as(env, org.owner.token)
        .get(org.path(`/agents${query}`))
        .expect(200);

    expect(names(await list(''))).to.deep.equal(['Apple', 'banana', 'cherry']);
    expect(names(await list('?orderBy=name:desc'))).to.deep.equal(['cherry', 'banana', 'Apple']);
    expect(names(await list('?orderBy=created_at'))).to.deep.equal(['banana', 'Apple', 'cherry']);
    expect(names(await list('?orderBy=created_at:desc'))).to.deep.equal(['cherry', 'Apple', 'banana']);
    const page2 = await list('?limit=2&cursor=2');
    expect(page2.body).to.deep.include({ totalRows: 3, offset: 2 });
    expect(names(page2)).to.deep.equal(['cherry']);
    const q = await list('?q=AN');
    expect(names(q)).to.deep.equal(['banana']);
    expect(q.body.totalRows).to.equal(1);
    expect(names(await list('?q=.*'))).to.deep.equal([]);

    const first = (await list('?q=banana')).body.items[0];
    await as(env, org.owner.token)
      .put(org.path(`/agents/${first.id}`), { ...base, name: 'banana' })
      .expect(200);
    expect(names(await list('?orderBy=updated_at:desc'))[0]).to.equal('banana');

    await as(env, org.owner.token).get(org.path('/agents?orderBy=colour')).expect(400);
    await as(env, org.owner.token).get(org.path('/agents?orderBy=name:sideways')).expect(400);
    await as(env, org.owner.token).get(org.path('/agents?limit=0')).expect(400);
  });

  it('lists every agent with all=true for admins and owners only', async () => {
    await create({ ...base, name: 'Hidden' }).expect(201);
    for (const token of [org.admin.token, org.owner.token]) {
      const all = await as(env, token).get(org.path('/agents?all=true')).expect(200);
      expect(names(all)).to.deep.equal(['Hidden']);
    }
    const res = await as(env, org.chat.token).get(org.path('/agents?all=true')).expect(403);
    expect(res.body.error.code).to.equal('forbidden');
    // Without all, the admin (no group, no default group) sees nothing; the owner sees everything.
    expect((await as(env, org.admin.token).get(org.path('/agents')).expect(200)).body.totalRows).to.equal(0);
    expect((await as(env, org.owner.token).get(org.path('/agents')).expect(200)).body.totalRows).to.equal(1);
    await as(env, org.chat.token).get(org.path('/agents?all=false')).expect(200);
  });

  it('only admins and owners create, change and delete agents', async () => {
    const agent = (await create(base).expect(201)).body;
    await create(base, org.chat.token).expect(403);
    await as(env, org.chat.token)
      .put(org.path(`/agents/${agent.id}`), base)
      .expect(403);
    await as(env, org.chat.token)
      .delete(org.path(`/agents/${agent.id}`))
      .expect(403);
    await as(env, org.chat.token)
      .put(org.path(`/agents/${agent.id}/visibility`), { visibility: 'private' })
      .expect(403);
    const viaKey = await as(env, org.apiKey).post(org.path('/agents'), base).expect(201);
    expect(viaKey.body.name).to.equal('Helper');
  });

  it('creates a default agent on first GET, once, even under concurrent requests', async () => {
    const gets = await Promise.all(
      Array.from({ length: 5 }, () => as(env, org.owner.token).get(org.path('/agents/default-assistant'))),
    );
    expect(gets.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
    const first = gets[0]!.body;
    expect(first).to.include({
      id: 'default-assistant',
      organizationId: org.organizationId,
      name: 'Assistant',
    });
    expect(first.instructions).to.be.a('string').and.not.empty;
    for (const r of gets) expect(r.body).to.deep.equal(first);
    const all = await as(env, org.owner.token).get(org.path('/agents?all=true&q=Assistant')).expect(200);
    expect(all.body.totalRows).to.equal(1);

    // Editable like any agent; the same id in another organization is a separate agent.
    await as(env, org.admin.token)
      .put(org.path('/agents/default-assistant'), { ...base, name: 'Our assistant' })
      .expect(200);
    const other = await createTestOrg(env, 'Other Default Org');
    const theirs = await as(env, other.owner.token).get(other.path('/agents/default-assistant')).expect(200);
    expect(theirs.body).to.include({ name: 'Assistant', organizationId: other.organizationId });
    const ours = await as(env, org.owner.token).get(org.path('/agents/default-assistant')).expect(200);
    expect(ours.body.name).to.equal('Our assistant');

    const writer = await as(env, org.admin.token).get(org.path('/agents/default-writer')).expect(200);
    expect(writer.body).to.include({ id: 'default-writer', creativityScore: '0.7' });
    await as(env, org.owner.token).get(org.path('/agents/default-nonsense')).expect(404);
  });

  it('publishes an agent only in organizations that host public content', async () => {
    const id = (await create(base).expect(201)).body.id;
    const url = org.path(`/agents/${id}/visibility`);
    const refused = await as(env, org.admin.token).put(url, { visibility: 'public' }).expect(403);
    expect(refused.body.error.message).to.contain('not configured to host public content');
    await as(env, org.admin.token).put(url, { visibility: 'private' }).expect(200);
    await as(env, org.admin.token).put(url, { visibility: 'secret' }).expect(400);

    await env.deps.services.organization.setHostsPublicContent(org.organizationId, true);
    const ok = await as(env, org.owner.token).put(url, { visibility: 'public' }).expect(200);
    expect(ok.body).to.deep.equal({ organizationId: org.organizationId, agentId: id, visibility: 'public' });
    const got = await as(env, org.owner.token)
      .get(org.path(`/agents/${id}`))
      .expect(200);
    expect(got.body.visibility).to.equal('public');
    await as(env, org.owner.token)
      .put(org.path('/agents/agt_missing/visibility'), { visibility: 'public' })
      .expect(404);
  });

  it('is invisible to other organizations', async () => {
    const id = (await create(base).expect(201)).body.id;
    const other = await createTestOrg(env, 'Other Agents Org');
    const theirs = (path: string) => as(env, other.owner.token).get(other.path(path));
    await theirs(`/agents/${id}`).expect(404);
    await as(env, other.owner.token)
      .put(other.path(`/agents/${id}`), base)
      .expect(404);
    await as(env, other.owner.token)
      .delete(other.path(`/agents/${id}`))
      .expect(404);
    expect((await theirs('/agents?all=true').expect(200)).body.totalRows).to.equal(0);
    // Their token on our path is refused outright.
    await as(env, other.owner.token)
      .get(org.path(`/agents/${id}`))
      .expect(401);
    await as(env, other.apiKey).get(org.path('/agents?all=true')).expect(401);
    await as(env, org.owner.token)
      .get(org.path(`/agents/${id}`))
      .expect(200);
  });
});
