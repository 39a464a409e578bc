import { expect } from 'chai';
import type { RequestContext } from '@lib/auth/context';
import { admin, member } from './kb-search-world';
import { MODEL, outcome, worldOf, type Setup } from './kb-manage-world';

/*
 * docs/knowledge-bases.md and openapi.yaml (createKnowledgeBase, updateKnowledgeBase, deleteKnowledgeBase,
 * listKnowledgeBases, copyKnowledgeBaseToOrganization): "ORGANIZATION needs admin or owner; PERSONAL any member";
 * "isPublic … only organizations an operator configured to host public content may publish (403 otherwise)";
 * "parseStrategy, folder and isPublic left out keep their value"; "the knowledge base disappears at once (404
 * afterwards) … removed by a durable workflow (kb-delete-<organizationId>-<knowledgeBaseId>)"; "forAgentId returns
 * a page holding only that agent's personal knowledge base, creating it on first use; the caller must be able to use
 * the agent"; copy-to "admin or owner of toOrganizationId (403 otherwise; 400 invalid_reference when the caller is
 * not a member there) … 403 session_required … a workflow whose id is kb-copy-<organizationId>-<messageId>".
 */

const setup: Setup = {
  kbs: [
    { organizationId: 'org_1', knowledgeBaseId: 'kb_handbook', type: 'ORGANIZATION', title: 'Handbook' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_policies', type: 'ORGANIZATION', title: 'Policies' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_ann', type: 'PERSONAL', creatorUserId: 'usr_ann' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_bob', type: 'PERSONAL', creatorUserId: 'usr_bob' },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_gone', type: 'ORGANIZATION', deletedAt: new Date(0) },
    { organizationId: 'org_2', knowledgeBaseId: 'kb_other', type: 'ORGANIZATION' },
  ],
  agents: [
    { organizationId: 'org_1', agentId: 'agt_help', name: 'Helper' },
    { organizationId: 'org_1', agentId: 'agt_desk', name: 'Desk' },
  ],
  agentsOf: { usr_ann: ['agt_help'], usr_bob: ['agt_desk'] },
  roles: { 'org_2:usr_ann': 'admin', 'org_2:usr_bob': 'chat', 'org_2:usr_owen': 'owner' },
};
const ann = member('usr_ann');
const bob = member('usr_bob');
const boss = admin('usr_boss');
/** An owner-like caller who reads every agent too (agents.all). */
const chief: RequestContext = { ...boss, capabilities: new Set([...boss.capabilities, 'agents.all']) };
const body = { title: 'Leases', llmDescription: 'signed leases' };

const ORG_ROLE = '403 forbidden: creating an organization knowledge base needs the admin or owner role';
const CHANGE_ROLE = '403 forbidden: changing an organization knowledge base needs the admin or owner role';
const PUBLISH_ROLE = '403 forbidden: publishing a knowledge base needs the admin or owner role';
const NOT_FOUND = '404 not_found: knowledge base not found';

describe('knowledge bases service (unit, stores in memory)', () => {
  describe('create', () => {
    it('creates an organization knowledge base by default, with the documented defaults and the embedding model', async () => {
      const w = worldOf(setup);
      const view = (await w.knowledgeBases.create(boss, { ...body, title: '  Leases  ' })) as Record<
        string,
        unknown
      >;
      const { knowledgeBaseId, createdAt, updatedAt, ...rest } = view;
      expect(knowledgeBaseId).to.match(/^kb_.+/);
      expect(createdAt).to.be.a('string');
      expect(updatedAt).to.be.a('string');
      expect(rest).to.deep.equal({
        organizationId: 'org_1',
        type: 'ORGANIZATION',
        title: 'Leases',
        llmDescription: 'signed leases',
        creatorUserId: 'usr_boss',
        isPublic: false,
        parseStrategy: 'auto',
        folder: null,
        agentId: null,
        embeddingModel: 'local:all-MiniLM-L6-v2',
      });
      const stored = w.stored('org_1', knowledgeBaseId as string)!;
      expect(stored.embeddingDimensions).to.equal(384);
      expect(stored.title).to.equal('Leases');
    });

    it('refuses a member an organization knowledge base (said or by default) and lets them create a personal one', async () => {
      const w = worldOf(setup);
      expect(await outcome(w.knowledgeBases.create(ann, body))).to.equal(ORG_ROLE);
      expect(await outcome(w.knowledgeBases.create(ann, { ...body, type: 'ORGANIZATION' }))).to.equal(
        ORG_ROLE,
      );
      const made = await w.knowledgeBases.create(ann, {
        ...body,
        type: 'PERSONAL',
        parseStrategy: 'text',
        folder: 'Legal',
        isPublic: false,
      });
      expect(made).to.include({
        type: 'PERSONAL',
        creatorUserId: 'usr_ann',
        parseStrategy: 'text',
        folder: 'Legal',
        isPublic: false,
      });
      // Ann's is the only one made: the refused ones stored nothing.
      const annsList = await w.knowledgeBases.list(ann, { limit: 50, offset: 0, includePersonalKBs: true });
      expect(annsList.items.map((k) => k.title)).to.deep.equal(['Handbook', 'Policies', 'kb_ann', 'Leases']);
    });

    it('publishes only for admins, and only in an organization allowed to host public content', async () => {
      const closed = worldOf(setup);
      expect(
        await outcome(closed.knowledgeBases.create(ann, { ...body, type: 'PERSONAL', isPublic: true })),
      ).to.equal(PUBLISH_ROLE);
      expect(await outcome(closed.knowledgeBases.create(boss, { ...body, isPublic: true }))).to.equal(
        '403 forbidden: this organization is not configured to host public content, so its knowledge bases cannot be ' +
          'public; an operator enables it with `npm run cli -- org-public --org <organizationId> --enabled true`',
      );
      const open = worldOf({ ...setup, publishing: ['org_1'] });
      expect(await open.knowledgeBases.create(boss, { ...body, isPublic: true })).to.include({
        isPublic: true,
      });
      expect(
        await outcome(open.knowledgeBases.create(ann, { ...body, type: 'PERSONAL', isPublic: true })),
      ).to.equal(PUBLISH_ROLE);
    });
  });

  describe('get and update', () => {
    it("reads organization and one's own knowledge bases; another member's, a deleted or another organization's is 404", async () => {
      const w = worldOf(setup);
      expect(await w.knowledgeBases.get(ann, 'kb_handbook')).to.include({
        knowledgeBaseId: 'kb_handbook',
        title: 'Handbook',
      });
      expect(await w.knowledgeBases.get(ann, 'kb_ann')).to.include({
        knowledgeBaseId: 'kb_ann',
        type: 'PERSONAL',
      });
      expect(await w.knowledgeBases.get(boss, 'kb_bob')).to.include({ knowledgeBaseId: 'kb_bob' });
      for (const id of ['kb_bob', 'kb_gone', 'kb_other'])
        expect(await outcome(w.knowledgeBases.get(ann, id))).to.equal(NOT_FOUND);
    });

    it('replaces title (trimmed) and description and keeps parseStrategy, folder and isPublic when left out', async () => {
      const w = worldOf({ ...setup, publishing: ['org_1'] });
      await w.knowledgeBases.update(boss, 'kb_handbook', {
        ...body,
        parseStrategy: 'text',
        folder: 'HR',
        isPublic: true,
      });
      const kept = await w.knowledgeBases.update(boss, 'kb_handbook', {
        title: ' Staff handbook ',
        llmDescription: 'rules',
      });
      expect(kept).to.include({
        title: 'Staff handbook',
        llmDescription: 'rules',
        parseStrategy: 'text',
        folder: 'HR',
        isPublic: true,
      });
      const changed = await w.knowledgeBases.update(boss, 'kb_handbook', {
        ...body,
        parseStrategy: 'raw',
        folder: null,
        isPublic: false,
      });
      expect(changed).to.include({ parseStrategy: 'raw', folder: null, isPublic: false });
      expect(w.stored('org_1', 'kb_handbook')).to.include({ title: 'Leases', folder: null, isPublic: false });
    });

    it('lets a member change their own personal knowledge base only; admins change any; a vanished one is 404', async () => {
      const w = worldOf(setup);
      expect(await w.knowledgeBases.update(ann, 'kb_ann', { ...body, isPublic: false })).to.include({
        title: 'Leases',
      });
      expect(await outcome(w.knowledgeBases.update(ann, 'kb_handbook', body))).to.equal(CHANGE_ROLE);
      expect(await outcome(w.knowledgeBases.update(ann, 'kb_bob', body))).to.equal(NOT_FOUND);
      expect(await outcome(w.knowledgeBases.update(ann, 'kb_ann', { ...body, isPublic: true }))).to.equal(
        PUBLISH_ROLE,
      );
      expect(w.stored('org_1', 'kb_handbook')!.title).to.equal('Handbook');
      expect(w.stored('org_1', 'kb_bob')!.title).to.equal('kb_bob');
      expect(await w.knowledgeBases.update(boss, 'kb_bob', body)).to.include({
        title: 'Leases',
        creatorUserId: 'usr_bob',
      });
      // Deleted by someone else between the access check and the write.
      w.vanishing.add('kb_policies');
      expect(await outcome(w.knowledgeBases.update(boss, 'kb_policies', body))).to.equal(NOT_FOUND);
    });
  });

  describe('remove', () => {
    it('hides the knowledge base at once and starts its purge workflow under its deterministic id', async () => {
      const w = worldOf(setup);
      expect(await w.knowledgeBases.remove(ann, 'kb_ann')).to.deep.equal({
        message: 'the knowledge base and its files are being deleted',
        knowledgeBaseId: 'kb_ann',
      });
      expect(w.starts).to.deep.equal([
        {
          workflow: 'purgeKnowledgeWorkflow',
          workflowId: 'kb-delete-org_1-kb_ann',
          args: [{ organizationId: 'org_1', knowledgeBaseId: 'kb_ann' }],
          taskQueue: 'main',
          attributes: { OrganizationId: 'org_1', KnowledgeBaseId: 'kb_ann' },
          fairnessKey: 'org_1',
        },
      ]);
      expect(await outcome(w.knowledgeBases.get(ann, 'kb_ann'))).to.equal(NOT_FOUND);
      expect(await outcome(w.knowledgeBases.remove(ann, 'kb_ann'))).to.equal(NOT_FOUND);
      expect(w.starts).to.have.length(1);
    });

    it('refuses a member an organization one (403) and another member’s (404), and starts nothing', async () => {
      const w = worldOf(setup);
      expect(await outcome(w.knowledgeBases.remove(ann, 'kb_handbook'))).to.equal(CHANGE_ROLE);
      expect(await outcome(w.knowledgeBases.remove(ann, 'kb_bob'))).to.equal(NOT_FOUND);
      w.vanishing.add('kb_policies');
      expect(await outcome(w.knowledgeBases.remove(boss, 'kb_policies'))).to.equal(NOT_FOUND);
      expect(w.starts).to.deep.equal([]);
      expect(w.stored('org_1', 'kb_handbook')!.deletedAt).to.equal(null);
      expect(w.stored('org_1', 'kb_bob')!.deletedAt).to.equal(null);
    });
  });

  describe('list', () => {
    it("lists the organization's knowledge bases by title, personal ones only when asked, in the caller's scope", async () => {
      const w = worldOf(setup);
      const first = await w.knowledgeBases.list(ann, { limit: 20, offset: 0 });
      expect(first.items.map((k) => k.knowledgeBaseId)).to.deep.equal(['kb_handbook', 'kb_policies']);
      expect(first).to.include({ totalRows: 2, offset: 0 });
      expect(w.listQueries[0]).to.deep.equal({
        q: undefined,
        folder: undefined,
        orderBy: 'title',
        descending: false,
        includePersonal: false,
        personal: { userId: 'usr_ann', agentIds: ['agt_help'] },
        limit: 20,
        offset: 0,
      });
      const withPersonal = await w.knowledgeBases.list(ann, {
        limit: 20,
        offset: 0,
        includePersonalKBs: true,
      });
      expect(withPersonal.items.map((k) => k.knowledgeBaseId)).to.deep.equal([
        'kb_handbook',
        'kb_policies',
        'kb_ann',
      ]);
    });

    it('passes the search, folder, order and page on; an admin sees every personal knowledge base', async () => {
      const w = worldOf(setup);
      const page = await w.knowledgeBases.list(boss, {
        limit: 2,
        offset: 1,
        q: 'hand',
        folder: 'HR',
        orderBy: 'created_at:desc',
        includePersonalKBs: true,
      });
      expect(w.listQueries[0]).to.deep.equal({
        q: 'hand',
        folder: 'HR',
        orderBy: 'created_at',
        descending: true,
        includePersonal: true,
        personal: undefined,
        limit: 2,
        offset: 1,
      });
      expect(page.items.map((k) => k.knowledgeBaseId)).to.deep.equal(['kb_policies', 'kb_ann']);
      expect(page).to.include({ totalRows: 4, offset: 1 });
      await w.knowledgeBases.list(boss, { limit: 5, offset: 0, orderBy: 'updated_at' });
      expect(w.listQueries[1]).to.include({ orderBy: 'updated_at', descending: false });
    });

    it("answers forAgentId with the agent's personal knowledge base, created once on first use", async () => {
      const w = worldOf(setup);
      const first = await w.knowledgeBases.list(ann, { limit: 20, offset: 5, forAgentId: 'agt_help' });
      expect(first).to.include({ totalRows: 1, offset: 0 });
      expect(first.items).to.have.length(1);
      expect(first.items[0]).to.include({
        knowledgeBaseId: 'kbagent_agt_help',
        organizationId: 'org_1',
        type: 'PERSONAL',
        title: 'Helper (personal)',
        llmDescription: 'Documents of the agent Helper',
        creatorUserId: 'usr_ann',
        agentId: 'agt_help',
        isPublic: false,
        embeddingModel: 'local:all-MiniLM-L6-v2',
      });
      expect(w.stored('org_1', 'kbagent_agt_help')!.embeddingDimensions).to.equal(MODEL.dimensions);
      // Asked again by someone else: the same one, still Ann's; no list query ran for either.
      const again = await w.knowledgeBases.list(chief, { limit: 20, offset: 0, forAgentId: 'agt_help' });
      expect(again.items[0]).to.deep.equal(first.items[0]);
      expect(w.listQueries).to.deep.equal([]);
    });

    it('refuses forAgentId for an agent the caller may not use or that does not exist, and creates nothing', async () => {
      const w = worldOf(setup);
      for (const agentId of ['agt_desk', 'agt_none'])
        expect(
          await outcome(w.knowledgeBases.list(ann, { limit: 20, offset: 0, forAgentId: agentId })),
        ).to.equal(`400 invalid_reference: forAgentId: ${agentId} does not exist or is not visible to you`);
      expect(w.stored('org_1', 'kbagent_agt_desk')).to.equal(undefined);
      const deleting = worldOf({
        ...setup,
        kbs: [
          {
            organizationId: 'org_1',
            knowledgeBaseId: 'kbagent_agt_desk',
            type: 'PERSONAL',
            agentId: 'agt_desk',
            deletedAt: new Date(0),
          },
        ],
      });
      expect(
        await outcome(deleting.knowledgeBases.list(bob, { limit: 20, offset: 0, forAgentId: 'agt_desk' })),
      ).to.equal('404 not_found: knowledge base (it is being deleted; retry shortly) not found');
    });
  });

  describe('copy to another organization', () => {
    it('starts the copy workflow for a reader who is admin or owner in the destination', async () => {
      const w = worldOf(setup);
      const { messageId } = await w.knowledgeBases.copyToOrganization(ann, 'kb_handbook', 'org_2');
      expect(messageId).to.match(/^msg_.+/);
      expect(w.starts).to.deep.equal([
        {
          workflow: 'copyKnowledgeBaseWorkflow',
          workflowId: `kb-copy-org_1-${messageId}`,
          args: [
            {
              organizationId: 'org_1',
              knowledgeBaseId: 'kb_handbook',
              toOrganizationId: 'org_2',
              messageId,
              userId: 'usr_ann',
            },
          ],
          taskQueue: 'main',
          // The run is the source's: its organization and knowledge base.
          attributes: { OrganizationId: 'org_1', KnowledgeBaseId: 'kb_handbook' },
          fairnessKey: 'org_1',
        },
      ]);
      const owen = member('usr_owen');
      expect((await w.knowledgeBases.copyToOrganization(owen, 'kb_policies', 'org_2')).messageId).to.match(
        /^msg_/,
      );
      expect(w.starts).to.have.length(2);
    });

    it('refuses a token, a non-member, a chat member of the destination and an unreadable source; starts nothing', async () => {
      const w = worldOf(setup);
      for (const via of ['api_key', 'assume_role', 'app'] as const)
        expect(
          await outcome(w.knowledgeBases.copyToOrganization({ ...ann, via }, 'kb_handbook', 'org_2')),
        ).to.equal(
          '403 session_required: copying to another organization needs a signed-in user session: an API key or token belongs to one organization',
        );
      expect(await outcome(w.knowledgeBases.copyToOrganization(ann, 'kb_handbook', 'org_3'))).to.equal(
        '400 invalid_reference: toOrganizationId: org_3 does not exist or is not visible to you',
      );
      expect(await outcome(w.knowledgeBases.copyToOrganization(bob, 'kb_handbook', 'org_2'))).to.equal(
        '403 forbidden: copying needs the admin or owner role in the destination organization',
      );
      // The source is checked first: an unreadable one is 404 whatever the credential.
      expect(
        await outcome(w.knowledgeBases.copyToOrganization({ ...ann, via: 'api_key' }, 'kb_bob', 'org_2')),
      ).to.equal(NOT_FOUND);
      expect(w.starts).to.deep.equal([]);
    });
  });

  it('names existing knowledge bases in the order asked and finds one without an access check', async () => {
    const w = worldOf(setup);
    expect(
      await w.knowledgeBases.titlesOf('org_1', ['kb_policies', 'kb_missing', 'kb_handbook', 'kb_gone']),
    ).to.deep.equal(['Policies', 'Handbook']);
    expect(await w.knowledgeBases.find('org_1', 'kb_bob')).to.include({ knowledgeBaseId: 'kb_bob' });
    expect(await w.knowledgeBases.find('org_2', 'kb_bob')).to.equal(null);
  });
});
