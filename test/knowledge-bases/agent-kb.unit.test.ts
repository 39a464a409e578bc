import { expect } from 'chai';
import type { RequestContext } from '@lib/auth/context';
import { admin, member } from './kb-search-world';
import { outcome, worldOf, type Setup } from './kb-manage-world';

/*
 * openapi.yaml, /orgs/{org}/agents/{agentId}/knowledgebases: the list is for "members who can read the agent",
 * "the attachments, oldest first"; attaching takes "a knowledge base of this organization, or with kbOrganizationId a
 * public knowledge base of another organization (400 invalid_reference when it is not public or does not exist)";
 * detaching answers { organizationId, agentId, knowledgeBaseId }. docs/knowledge-bases.md: "Deleting an agent …
 * removes its attachments"; a knowledge base a caller cannot read is, to them, one that does not exist.
 */

const setup: Setup = {
  kbs: [
    { organizationId: 'org_1', knowledgeBaseId: 'kb_handbook', type: 'ORGANIZATION', title: 'Handbook' },
    {
      organizationId: 'org_1',
      knowledgeBaseId: 'kb_ann',
      type: 'PERSONAL',
      creatorUserId: 'usr_ann',
      title: 'Notes',
    },
    { organizationId: 'org_1', knowledgeBaseId: 'kb_bob', type: 'PERSONAL', creatorUserId: 'usr_bob' },
    {
      organizationId: 'org_2',
      knowledgeBaseId: 'kb_public',
      type: 'ORGANIZATION',
      isPublic: true,
      title: 'Public law',
    },
    { organizationId: 'org_2', knowledgeBaseId: 'kb_private', type: 'ORGANIZATION' },
    {
      organizationId: 'org_2',
      knowledgeBaseId: 'kb_withdrawn',
      type: 'ORGANIZATION',
      isPublic: true,
      deletedAt: new Date(0),
    },
  ],
  agents: [
    { organizationId: 'org_1', agentId: 'agt_help', name: 'Helper' },
    { organizationId: 'org_1', agentId: 'agt_desk', name: 'Desk' },
  ],
  agentsOf: { usr_ann: ['agt_help'] },
};
const boss = admin('usr_boss');
const ann = member('usr_ann');
/** Ann with an API key that may manage agents but not knowledge bases: she attaches only what she reads. */
const annManaging: RequestContext = { ...ann, capabilities: new Set([...ann.capabilities, 'agents.manage']) };
const unseen = (id: string) =>
  `400 invalid_reference: knowledgeBaseId: ${id} does not exist or is not visible to you`;
const NO_AGENT = '404 not_found: agent not found';

describe('agent knowledge bases service (unit, stores in memory)', () => {
  it("attaches a knowledge base of the caller's organization, recording its title and who attached it", async () => {
    const w = worldOf(setup);
    const view = (await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_handbook')) as Record<
      string,
      unknown
    >;
    const { createdAt, ...rest } = view;
    expect(createdAt).to.be.a('string');
    expect(rest).to.deep.equal({
      organizationId: 'org_1',
      agentId: 'agt_help',
      knowledgeBaseId: 'kb_handbook',
      kbOrganizationId: 'org_1',
      kbTitle: 'Handbook',
      creatorUserId: 'usr_boss',
    });
    // Naming one's own organization is the same as leaving it out.
    expect(await w.agentKnowledgeBases.attach(boss, 'agt_desk', 'kb_bob', 'org_1')).to.include({
      kbOrganizationId: 'org_1',
      kbTitle: 'kb_bob',
    });
    expect(w.attachments.map((a) => `${a.agentId}/${a.knowledgeBaseId}`)).to.deep.equal([
      'agt_help/kb_handbook',
      'agt_desk/kb_bob',
    ]);
  });

  it("attaches another organization's knowledge base only while it is public", async () => {
    const w = worldOf(setup);
    expect(await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_public', 'org_2')).to.include({
      organizationId: 'org_1',
      knowledgeBaseId: 'kb_public',
      kbOrganizationId: 'org_2',
      kbTitle: 'Public law',
    });
    for (const id of ['kb_private', 'kb_withdrawn', 'kb_none'])
      expect(await outcome(w.agentKnowledgeBases.attach(boss, 'agt_help', id, 'org_2'))).to.equal(unseen(id));
    // A public knowledge base is looked up in the organization named, not in the caller's.
    expect(await outcome(w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_public'))).to.equal(
      unseen('kb_public'),
    );
    expect(w.attachments.map((a) => a.knowledgeBaseId)).to.deep.equal(['kb_public']);
  });

  it('attaches only knowledge bases the caller can read: another member’s personal one does not exist for them', async () => {
    const w = worldOf(setup);
    expect(await outcome(w.agentKnowledgeBases.attach(annManaging, 'agt_help', 'kb_bob'))).to.equal(
      unseen('kb_bob'),
    );
    expect(await w.agentKnowledgeBases.attach(annManaging, 'agt_help', 'kb_ann')).to.include({
      kbTitle: 'Notes',
    });
    expect(await w.agentKnowledgeBases.attach(annManaging, 'agt_help', 'kb_handbook')).to.include({
      kbTitle: 'Handbook',
    });
    expect(w.attachments.map((a) => a.knowledgeBaseId)).to.deep.equal(['kb_ann', 'kb_handbook']);
  });

  it('answers 404 for an agent that does not exist, attaching and detaching nothing', async () => {
    const w = worldOf(setup);
    expect(await outcome(w.agentKnowledgeBases.attach(boss, 'agt_none', 'kb_handbook'))).to.equal(NO_AGENT);
    expect(await outcome(w.agentKnowledgeBases.list(boss, 'agt_none'))).to.equal(NO_AGENT);
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_handbook');
    w.attachments[0]!.agentId = 'agt_none';
    expect(await outcome(w.agentKnowledgeBases.detach(boss, 'agt_none', 'kb_handbook'))).to.equal(NO_AGENT);
    expect(w.attachments).to.have.length(1);
  });

  it("lists an agent's attachments, oldest first, to whoever may read the agent", async () => {
    const w = worldOf(setup);
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_handbook');
    await w.agentKnowledgeBases.attach(boss, 'agt_desk', 'kb_bob');
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_public', 'org_2');
    const listed = await w.agentKnowledgeBases.list(ann, 'agt_help');
    expect(listed).to.include({ organizationId: 'org_1', agentId: 'agt_help' });
    expect(
      listed.knowledgebases.map((k) => [k.knowledgeBaseId, k.kbOrganizationId, k.kbTitle]),
    ).to.deep.equal([
      ['kb_handbook', 'org_1', 'Handbook'],
      ['kb_public', 'org_2', 'Public law'],
    ]);
    expect(await outcome(w.agentKnowledgeBases.list(ann, 'agt_desk'))).to.equal(NO_AGENT);
  });

  it('detaches a knowledge base from one agent, whichever organization owns it; a second time is 404', async () => {
    const w = worldOf(setup);
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_public', 'org_2');
    await w.agentKnowledgeBases.attach(boss, 'agt_desk', 'kb_public', 'org_2');
    expect(await w.agentKnowledgeBases.detach(boss, 'agt_help', 'kb_public')).to.deep.equal({
      organizationId: 'org_1',
      agentId: 'agt_help',
      knowledgeBaseId: 'kb_public',
    });
    expect(w.attachments.map((a) => a.agentId)).to.deep.equal(['agt_desk']);
    expect(await outcome(w.agentKnowledgeBases.detach(boss, 'agt_help', 'kb_public'))).to.equal(
      '404 not_found: knowledge base attachment not found',
    );
  });

  it("names an agent's attached knowledge bases for its tools and removes them with the agent", async () => {
    const w = worldOf(setup);
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_handbook');
    await w.agentKnowledgeBases.attach(boss, 'agt_help', 'kb_public', 'org_2');
    await w.agentKnowledgeBases.attach(boss, 'agt_desk', 'kb_bob');
    expect(await w.agentKnowledgeBases.titlesForAgent('org_1', 'agt_help')).to.deep.equal([
      'Handbook',
      'Public law',
    ]);
    expect(await w.agentKnowledgeBases.titlesForAgent('org_2', 'agt_help')).to.deep.equal([]);
    await w.agentKnowledgeBases.removeForAgent('org_1', 'agt_help');
    expect(await w.agentKnowledgeBases.titlesForAgent('org_1', 'agt_help')).to.deep.equal([]);
    expect(await w.agentKnowledgeBases.titlesForAgent('org_1', 'agt_desk')).to.deep.equal(['kb_bob']);
  });
});
