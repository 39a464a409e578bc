import { expect } from 'chai';
import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import type { Capability } from '@lib/auth/roles';
import { AppError } from '@lib/errors';
import { KbAccess } from '@lib/knowledge-bases/kb-access';
import type { KnowledgeBaseDoc } from '@lib/knowledge-bases/knowledge-base.schema';
import type { Tenants } from '@lib/db/tenants';
import type { KnowledgeBasesStore } from '@lib/knowledge-bases/store';

/*
 * docs/knowledge-bases.md: "Every member reads the organization's knowledge bases (ORGANIZATION); a PERSONAL one is
 * read by its creator, by admins and owners, and — for an agent's personal knowledge base — by whoever may read the
 * agent. Writes to an ORGANIZATION knowledge base need admin or owner; a personal one also its creator."
 */

const kb = (knowledgeBaseId: string, fields: Partial<KnowledgeBaseDoc>) =>
  ({
    organizationId: 'org_1',
    knowledgeBaseId,
    agentId: null,
    creatorUserId: null,
    ...fields,
  }) as KnowledgeBaseDoc;

const knowledgeBases = [
  kb('kb_handbook', { type: 'ORGANIZATION', creatorUserId: 'usr_admin' }),
  kb('kb_ann', { type: 'PERSONAL', creatorUserId: 'usr_ann' }),
  kb('kb_bob', { type: 'PERSONAL', creatorUserId: 'usr_bob' }),
  // The personal knowledge base of the agent "Desk", first asked for by Ann, who has since lost the agent.
  kb('kb_desk', { type: 'PERSONAL', creatorUserId: 'usr_ann', agentId: 'agt_desk' }),
];

/** Which agents each member may use (the agents feature's rule, as its port answers it). */
const agentsOf: Record<string, string[]> = { usr_ann: [], usr_bob: ['agt_desk'] };
const agents = {
  accessibleAgentIds: (ctx: RequestContext) => Promise.resolve(agentsOf[ctx.userId]),
  canAccessAgent: (ctx: RequestContext, agentId: string) =>
    Promise.resolve((agentsOf[ctx.userId] ?? []).includes(agentId)),
} as unknown as AgentAccess;

const repos: Tenants<KnowledgeBasesStore> = {
  tenant: (organizationId: string) =>
    ({
      knowledgeBases: {
        get: (id: string) =>
          Promise.resolve(
            knowledgeBases.find((k) => k.organizationId === organizationId && k.knowledgeBaseId === id) ??
              null,
          ),
      },
    }) as unknown as KnowledgeBasesStore,
};

const access = new KbAccess(repos, agents);

const member = (userId: string): RequestContext => ({
  organizationId: 'org_1',
  userId,
  role: 'chat',
  capabilities: new Set<Capability>(['knowledge_bases.use']),
  via: 'session',
});
const admin: RequestContext = {
  ...member('usr_admin'),
  role: 'admin',
  capabilities: new Set<Capability>(['knowledge_bases.use', 'knowledge_bases.manage']),
};
const ann = member('usr_ann');
const bob = member('usr_bob');

async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return `${err.status} ${err.message}`;
    throw err;
  }
  return 'allowed';
}

const reads = (ctx: RequestContext, id: string) =>
  refusal(access.readable(ctx, id).then((k) => expect(k.knowledgeBaseId).to.equal(id)));
const writes = (ctx: RequestContext, id: string) =>
  refusal(access.writable(ctx, id).then((k) => expect(k.knowledgeBaseId).to.equal(id)));

describe('knowledge base access (unit, two members of one organization)', () => {
  it("reads the organization's knowledge bases and one's own personal one; another member's is not found", async () => {
    expect(await reads(ann, 'kb_handbook')).to.equal('allowed');
    expect(await reads(ann, 'kb_ann')).to.equal('allowed');
    expect(await reads(bob, 'kb_bob')).to.equal('allowed');
    expect(await reads(ann, 'kb_bob')).to.equal('404 knowledge base not found');
    expect(await reads(bob, 'kb_ann')).to.equal('404 knowledge base not found');
    expect(await reads(bob, 'kb_missing')).to.equal('404 knowledge base not found');
  });

  it("reads an agent's personal knowledge base by whoever may use the agent, not by its creator who may not", async () => {
    expect(await reads(bob, 'kb_desk')).to.equal('allowed');
    expect(await reads(ann, 'kb_desk')).to.equal('404 knowledge base not found');
  });

  it('lets admins read every personal knowledge base', async () => {
    for (const id of ['kb_ann', 'kb_bob', 'kb_desk']) expect(await reads(admin, id)).to.equal('allowed');
  });

  it('changes a personal knowledge base by its creator; an organization one only by admins (403 for members)', async () => {
    expect(await writes(ann, 'kb_ann')).to.equal('allowed');
    expect(await writes(bob, 'kb_desk')).to.equal('allowed');
    expect(await writes(admin, 'kb_handbook')).to.equal('allowed');
    expect(await writes(admin, 'kb_bob')).to.equal('allowed');
    expect(await writes(ann, 'kb_handbook')).to.equal(
      '403 changing an organization knowledge base needs the admin or owner role',
    );
    expect(await writes(ann, 'kb_bob')).to.equal('404 knowledge base not found');
  });

  it("scopes a member's personal knowledge bases to their own and their agents'; an admin's to all", async () => {
    expect(await access.personalScope(bob)).to.deep.equal({ userId: 'usr_bob', agentIds: ['agt_desk'] });
    expect(await access.personalScope(admin)).to.equal(undefined);
  });
});
