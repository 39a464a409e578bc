import { expect } from 'chai';
import type { SearchHit } from '@lib/knowledge-bases/kb-search.service';
import { indexed, OPENAI, searchIn, worldOf, type Attachment, type Kb } from './kb-search-world';

/*
 * What an agent's, a chain step's and an analysis's search tool finds (docs/knowledge-bases.md "Agents": attached
 * knowledge bases give the agent's turns a search tool; an analysis searches the organization's knowledge bases,
 * the personal ones of the member who asked and of the conversation's agent, and those attached to the agent —
 * never another member's personal knowledge base).
 */

const kbs: Kb[] = [
  { organizationId: 'org_1', knowledgeBaseId: 'kb_handbook', type: 'ORGANIZATION' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_ann', type: 'PERSONAL', creatorUserId: 'usr_ann' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_bob', type: 'PERSONAL', creatorUserId: 'usr_bob' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_desk', type: 'PERSONAL', agentId: 'agt_desk' },
  // Another agent's personal knowledge base, which an admin attached to Desk.
  { organizationId: 'org_1', knowledgeBaseId: 'kb_night', type: 'PERSONAL', agentId: 'agt_night' },
  { organizationId: 'org_1', knowledgeBaseId: 'kb_gone', type: 'ORGANIZATION', deletedAt: new Date(0) },
  {
    organizationId: 'org_2',
    knowledgeBaseId: 'kb_public',
    type: 'ORGANIZATION',
    isPublic: true,
    embeddingModel: OPENAI,
  },
  // Public when it was attached; its organization has since made it private.
  { organizationId: 'org_2', knowledgeBaseId: 'kb_withdrawn', type: 'ORGANIZATION' },
];
const items = [
  indexed('org_1', 'kb_handbook', 'handbook', 0.6),
  indexed('org_1', 'kb_ann', 'ann', 0.9),
  indexed('org_1', 'kb_bob', 'bob', 0.85),
  indexed('org_1', 'kb_desk', 'desk', 0.7),
  indexed('org_1', 'kb_night', 'night', 0.65),
  indexed('org_1', 'kb_gone', 'gone', 0.99),
  indexed('org_2', 'kb_public', 'public', 0.8, OPENAI),
  indexed('org_2', 'kb_withdrawn', 'withdrawn', 0.98),
];
const attach = (knowledgeBaseId: string, kbOrganizationId = 'org_1'): Attachment => ({
  organizationId: 'org_1',
  agentId: 'agt_desk',
  knowledgeBaseId,
  kbOrganizationId,
});
const attachments = [
  attach('kb_handbook'),
  attach('kb_public', 'org_2'),
  attach('kb_withdrawn', 'org_2'),
  attach('kb_night'),
  attach('kb_gone'),
];
const world = worldOf(kbs, items, { attachments });
const ids = (hits: SearchHit[]) => hits.map((h) => h.vectorId);

describe('knowledge base search for agents, chain steps and analyses (unit)', () => {
  it("an agent's search: the knowledge bases attached to it, of its organization and public ones of others", async () => {
    const { service } = searchIn(world);
    expect(ids(await service.searchForAgent('org_1', 'agt_desk', 'rent', 5))).to.deep.equal([
      'vec_public',
      'vec_night',
      'vec_handbook',
    ]);
    expect(ids(await service.searchForAgent('org_1', 'agt_desk', 'rent', 2))).to.deep.equal([
      'vec_public',
      'vec_night',
    ]);
    expect(await service.searchForAgent('org_1', 'agt_night', 'rent', 5)).to.deep.equal([]);
  });

  it("a chain step's search: the named knowledge bases of its organization that still exist", async () => {
    const { service, asked } = searchIn(world);
    const hits = await service.searchForStep(
      'org_1',
      ['kb_handbook', 'kb_missing', 'kb_gone', 'kb_desk'],
      'rent',
      5,
    );
    expect(ids(hits)).to.deep.equal(['vec_desk', 'vec_handbook']);
    expect(hits[0]).to.include({ text: 'text of desk', fileName: 'desk.txt', organizationId: 'org_1' });
    expect(asked.embedded).to.deep.equal([{ model: 'local:all-MiniLM-L6-v2', texts: ['rent'] }]);
    expect(ids(await service.searchForStep('org_1', ['kb_handbook', 'kb_desk'], 'rent', 1))).to.deep.equal([
      'vec_desk',
    ]);
    // Another organization's knowledge base is not reached by its id, public or not.
    expect(await service.searchForStep('org_1', ['kb_public'], 'rent', 5)).to.deep.equal([]);
  });

  it("an analysis's knowledge bases: the organization's, the asking member's and the agent's, and the attached", async () => {
    const { service } = searchIn(world);
    const forBob = await service.forAnalysis('org_1', { userId: 'usr_bob', agentId: 'agt_desk' });
    expect(forBob.map((kb) => `${kb.organizationId}/${kb.knowledgeBaseId}`)).to.deep.equal([
      'org_1/kb_handbook',
      'org_1/kb_bob',
      'org_1/kb_desk',
      'org_2/kb_public',
      'org_1/kb_night',
    ]);
    // Ann, with an agent that has nothing attached: never Bob's personal knowledge base, nor Desk's.
    const forAnn = await service.forAnalysis('org_1', { userId: 'usr_ann', agentId: 'agt_night' });
    expect(forAnn.map((kb) => kb.knowledgeBaseId)).to.deep.equal(['kb_handbook', 'kb_ann', 'kb_night']);
  });

  it("an analysis's search ranks the hits of all of them together", async () => {
    const { service } = searchIn(world);
    const who = { userId: 'usr_bob', agentId: 'agt_desk' };
    expect(ids(await service.searchForAnalysis('org_1', who, 'rent', 10))).to.deep.equal([
      'vec_bob',
      'vec_public',
      'vec_desk',
      'vec_night',
      'vec_handbook',
    ]);
    expect(ids(await service.searchForAnalysis('org_1', who, 'rent', 2))).to.deep.equal([
      'vec_bob',
      'vec_public',
    ]);
  });
});
