import { workflowIds } from '@contracts';
import { recordHistory } from '@test/helpers/histories';
import { expect } from 'chai';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { addMember, as, createTestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { createKb, search, settled, uploadFile } from '@test/helpers/kb';
import { eventually } from '@test/helpers/wait';

const TEXT =
  'Quarterly maintenance of the lifts is done by Acme Elevators every March, June, September and December.';

describe('knowledge bases: manage, delete and copy', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('KB Manage Org');

  it('creates, reads, updates and lists with q, folder, orderBy and personal ones only on request', async () => {
    const { env, org } = suite;
    const a = await createKb(env, org, { title: 'beta manuals', folder: 'ops' });
    const b = await createKb(env, org, { title: 'Alpha leases' });
    const mine = await as(env, org.chat.token)
      .post(org.path('/knowledgebases'), { title: 'My notes', llmDescription: 'n', type: 'PERSONAL' })
      .expect(201);
    expect(mine.body).to.include({ type: 'PERSONAL', parseStrategy: 'auto', creatorUserId: org.chat.userId });

    const list = (token: string, query = '') =>
      as(env, token)
        .get(org.path(`/knowledgebases${query}`))
        .expect(200)
        .then((r) => r.body as { items: Array<{ title: string }> });
    const titles = (body: { items: Array<{ title: string }> }) => body.items.map((i) => i.title);
    expect(titles(await list(org.chat.token))).to.deep.equal(['Alpha leases', 'beta manuals']);
    expect(titles(await list(org.chat.token, '?orderBy=title:desc'))).to.deep.equal([
      'beta manuals',
      'Alpha leases',
    ]);
    expect(titles(await list(org.chat.token, '?q=LEASE'))).to.deep.equal(['Alpha leases']);
    expect(titles(await list(org.chat.token, '?folder=ops'))).to.deep.equal(['beta manuals']);
    expect(titles(await list(org.chat.token, '?includePersonalKBs=true'))).to.include('My notes');
    // Another chat member does not see it, an admin does.
    const other = await addMember(env, org.organizationId, 'chat', 'Other');
    expect(titles(await list(other.token, '?includePersonalKBs=true'))).not.to.include('My notes');
    expect(titles(await list(org.admin.token, '?includePersonalKBs=true'))).to.include('My notes');
    await as(env, other.token)
      .get(org.path(`/knowledgebases/${mine.body.knowledgeBaseId}`))
      .expect(404);

    const updated = await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${a}`), { title: 'Beta', llmDescription: 'x', parseStrategy: 'text' })
      .expect(200);
    expect(updated.body).to.include({ title: 'Beta', parseStrategy: 'text', folder: 'ops' });
    await as(env, org.chat.token)
      .put(org.path(`/knowledgebases/${b}`), { title: 'Mine now', llmDescription: '' })
      .expect(403);
  });

  it('gives an agent exactly one personal knowledge base under concurrent first requests', async () => {
    const { env, org } = suite;
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        as(env, org.admin.token).get(org.path('/knowledgebases?forAgentId=default-assistant')).expect(200),
      ),
    );
    const ids = new Set(
      results.map((r) => (r.body as { items: Array<{ knowledgeBaseId: string }> }).items[0]!.knowledgeBaseId),
    );
    expect(ids.size).to.equal(1);
    expect(results[0]!.body.items[0]).to.include({ type: 'PERSONAL', agentId: 'default-assistant' });
  });

  it('publishes only where an operator allowed it; a public one is searchable and attachable elsewhere', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}`), { title: 'Docs', llmDescription: '', isPublic: true })
      .expect(403)
      .expect((r) => expect(r.body.error.message).to.contain('not configured to host public content'));
    await env.deps.services.organization.setHostsPublicContent(org.organizationId, true);
    await as(env, org.admin.token)
      .put(org.path(`/knowledgebases/${kb}`), { title: 'Docs', llmDescription: '', isPublic: true })
      .expect(200);
    const file = await uploadFile(env, org, kb, 'lifts.txt', TEXT);
    expect((await settled(env, org, kb, file.fileId)).status).to.equal('READY');

    const other = await createTestOrg(env, 'Reader Org');
    const hits = await as(env, other.chat.token)
      .get(other.path(`/knowledgebases/search?q=lift maintenance&kbIds=${kb}&kbOrgs=${org.organizationId}`))
      .expect(200);
    expect(hits.body.items[0]).to.include({ fileId: file.fileId, organizationId: org.organizationId });
    const global = await as(env, other.chat.token)
      .get(other.path('/knowledgebases/search?q=lift maintenance'))
      .expect(200);
    expect(global.body.items.map((h: { fileId: string }) => h.fileId)).to.include(file.fileId);
    await as(env, other.chat.token)
      .get(other.path(`/knowledgebases/search?q=x&kbIds=${kb},${kb}&kbOrgs=${org.organizationId}`))
      .expect(400);

    const agent = await as(env, other.admin.token)
      .post(other.path('/agents'), {
        name: 'Reader',
        description: 'd',
        instructions: 'i',
        model: 'gpt-4o-mini',
      })
      .expect(201);
    const attached = await as(env, other.admin.token)
      .post(other.path(`/agents/${agent.body.id}/knowledgebases`), {
        knowledgeBaseId: kb,
        kbOrganizationId: org.organizationId,
      })
      .expect(201);
    expect(attached.body).to.include({ kbOrganizationId: org.organizationId, kbTitle: 'Docs' });
    // A private knowledge base of another organization is not attachable.
    const hidden = await createKb(env, org, { title: 'Private' });
    await as(env, other.admin.token)
      .post(other.path(`/agents/${agent.body.id}/knowledgebases`), {
        knowledgeBaseId: hidden,
        kbOrganizationId: org.organizationId,
      })
      .expect(invalidReference('knowledgeBaseId'));
  });

  it('deletes a file and a knowledge base durably: records, vectors and attachments go', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const keep = await uploadFile(env, org, kb, 'keep.txt', TEXT);
    const drop = await uploadFile(env, org, kb, 'drop.txt', 'The boiler room key is kept at the front desk.');
    await settled(env, org, kb, keep.fileId);
    await settled(env, org, kb, drop.fileId);
    const model = env.deps.embedders.defaultEmbedder.model;
    const count = (fileId: string) => env.deps.vectors.countFile(model, org.organizationId, kb, fileId);
    expect(await count(drop.fileId)).to.equal(1);

    await as(env, org.admin.token)
      .delete(org.path(`/knowledgebases/${kb}/files/${drop.fileId}`))
      .expect(200);
    await as(env, org.admin.token)
      .get(org.path(`/knowledgebases/${kb}/files/${drop.fileId}`))
      .expect(404);
    await eventually(async () => (await count(drop.fileId)) === 0);
    expect(await count(keep.fileId)).to.equal(1);

    const agent = await as(env, org.admin.token)
      .post(org.path('/agents'), { name: 'A', description: 'd', instructions: 'i', model: 'gpt-4o-mini' })
      .expect(201);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agent.body.id}/knowledgebases`), { knowledgeBaseId: kb })
      .expect(201);
    const res = await as(env, org.admin.token)
      .delete(org.path(`/knowledgebases/${kb}`))
      .expect(200);
    expect(res.body).to.deep.equal({
      message: 'the knowledge base and its files are being deleted',
      knowledgeBaseId: kb,
    });
    await as(env, org.admin.token)
      .get(org.path(`/knowledgebases/${kb}`))
      .expect(404);
    await eventually(async () => (await count(keep.fileId)) === 0);
    await recordHistory(
      env,
      workflowIds.purgeKnowledgeBase(org.organizationId, kb),
      'kb-purge-knowledge-base',
    );
    await eventually(async () => {
      const atts = await as(env, org.admin.token)
        .get(org.path(`/agents/${agent.body.id}/knowledgebases`))
        .expect(200);
      return atts.body.knowledgebases.length === 0;
    });
    await eventually(
      async () => !(await env.deps.repos.tenant(org.organizationId).kbFiles.getIncludingDeleted(keep.fileId)),
    );
  });

  it('copies a file within the organization and a knowledge base to another organization where the caller is admin', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org);
    const file = await uploadFile(env, org, kb, 'lifts.txt', TEXT);
    await settled(env, org, kb, file.fileId);
    const dest = await createKb(env, org, { title: 'Dest' });
    const copy = await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/file/${file.fileId}/copy-to`), {
        destinationKnowledgeBaseId: dest,
      })
      .expect(201);
    expect(copy.body).to.include({ knowledgeBaseId: dest, fileName: 'lifts.txt', status: 'ENQUEUED' });
    expect((await settled(env, org, dest, copy.body.fileId)).status).to.equal('READY');
    expect((await search(env, org, dest, 'lift maintenance'))[0]!.fileId).to.equal(copy.body.fileId);

    const other = await createTestOrg(env, 'Copy Target');
    await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/copy-to`), { toOrganizationId: other.organizationId })
      .expect(invalidReference('toOrganizationId'));
    // The owner of both organizations copies.
    await env.deps.repos
      .tenant(other.organizationId)
      .members.add({ _id: org.owner.userId, name: 'Olive', email: org.owner.email }, 'chat');
    await as(env, org.owner.token)
      .post(org.path(`/knowledgebases/${kb}/copy-to`), { toOrganizationId: other.organizationId })
      .expect(403);
    await env.deps.repos.tenant(other.organizationId).members.setRole(org.owner.userId, 'admin');
    // An API key belongs to one organization: even its owner's key does not reach another (issue 32).
    const byKey = await as(env, org.apiKey)
      .post(org.path(`/knowledgebases/${kb}/copy-to`), { toOrganizationId: other.organizationId })
      .expect(403);
    expect(byKey.body.error.code).to.equal('session_required');
    const started = await as(env, org.owner.token)
      .post(org.path(`/knowledgebases/${kb}/copy-to`), { toOrganizationId: other.organizationId })
      .expect(200);
    expect(started.body.messageId).to.match(/^msg_/);
    await recordHistory(
      env,
      workflowIds.copyKnowledgeBase(org.organizationId, started.body.messageId),
      'kb-copy-knowledge-base',
    );
    const copied = await eventually(async () => {
      const list = await as(env, other.owner.token).get(other.path('/knowledgebases')).expect(200);
      return list.body.items[0] as { knowledgeBaseId: string } | undefined;
    });
    const files = await eventually(async () => {
      const res = await as(env, other.owner.token).get(
        other.path(`/knowledgebases/${copied.knowledgeBaseId}/files?status=READY`),
      );
      const items = res.body.items as Array<{ fileId: string }> | undefined;
      return items?.length === 1 ? items : undefined;
    });
    const hits = await search(env, other, copied.knowledgeBaseId, 'lift maintenance');
    expect(hits[0]).to.include({ fileId: files[0]!.fileId, text: TEXT });
  });
});
