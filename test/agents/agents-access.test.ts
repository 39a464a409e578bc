import { expect } from 'chai';
import type { RequestContext } from '@lib/auth/context';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { addMember, as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { stored } from '@test/helpers/store';

const base = { description: 'd', instructions: 'i', model: 'gpt-4o-mini' };

describe('agent access by group', () => {
  let env: TestEnv;
  let org: TestOrg;
  let alpha: string;
  let beta: string;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Access Org');
    alpha = (
      await as(env, org.owner.token)
        .post(org.path('/agents'), { ...base, name: 'Alpha' })
        .expect(201)
    ).body.id;
    beta = (
      await as(env, org.owner.token)
        .post(org.path('/agents'), { ...base, name: 'Beta' })
        .expect(201)
    ).body.id;
  });

  const group = async (body: { isDefault?: boolean; fullAccess?: boolean } = {}) =>
    (
      await as(env, org.admin.token)
        .post(org.path('/groups'), { name: `G${Date.now()}`, description: '', ...body })
        .expect(201)
    ).body.userGroupId as string;
  const join = (groupId: string, userId: string) =>
    as(env, org.admin.token)
      .post(org.path(`/groups/${groupId}/users`), { userId })
      .expect(200);
  const map = (groupId: string, agentId: string) =>
    as(env, org.admin.token).post(org.path(`/groups/${groupId}/agents`), { agentId });
  const visible = async (token: string): Promise<string[]> => {
    const res = await as(env, token).get(org.path('/agents')).expect(200);
    return (res.body.items as Array<{ name: string }>).map((a) => a.name);
  };

  it('gives owners every agent and others none when there is no group and no default group', async () => {
    expect(await visible(org.owner.token)).to.deep.equal(['Alpha', 'Beta']);
    expect(await visible(org.chat.token)).to.deep.equal([]);
    expect(await visible(org.admin.token)).to.deep.equal([]);
    const res = await as(env, org.chat.token)
      .get(org.path(`/agents/${alpha}`))
      .expect(404);
    expect(res.body.error.message).to.equal('agent not found');
    // Admins manage (and so read) every agent even without access by group.
    await as(env, org.admin.token)
      .get(org.path(`/agents/${alpha}`))
      .expect(200);
    // A chat member without access does not cause a default agent to be created.
    await as(env, org.chat.token).get(org.path('/agents/default-writer')).expect(404);
    expect(
      (await as(env, org.owner.token).get(org.path('/agents?all=true')).expect(200)).body.totalRows,
    ).to.equal(2);
  });

  it('gives a group exactly its mapped agents, and fullAccess every agent', async () => {
    const sales = await group();
    await join(sales, org.chat.userId);
    await join(sales, org.admin.userId);
    const created = await map(sales, alpha).expect(201);
    expect(created.body).to.deep.include({
      userGroupId: sales,
      organizationId: org.organizationId,
      agentId: alpha,
      agentName: 'Alpha',
    });
    expect(await visible(org.chat.token)).to.deep.equal(['Alpha']);
    expect(await visible(org.admin.token)).to.deep.equal(['Alpha']);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${alpha}`))
      .expect(200);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${beta}`))
      .expect(404);

    const all = await group({ fullAccess: true });
    await join(all, org.chat.userId);
    expect(await visible(org.chat.token)).to.deep.equal(['Alpha', 'Beta']);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${beta}`))
      .expect(200);
  });

  it('puts members without a group in the default group', async () => {
    const everyone = await group({ isDefault: true });
    await map(everyone, beta).expect(201);
    expect(await visible(org.chat.token)).to.deep.equal(['Beta']);
    // A member with their own group gets that group's agents, not the default's.
    const own = await group();
    await map(own, alpha).expect(201);
    await join(own, org.chat.userId);
    expect(await visible(org.chat.token)).to.deep.equal(['Alpha']);
    // Deleting their group drops them back into the default group, and removes the group's mappings.
    await as(env, org.admin.token)
      .delete(org.path(`/groups/${own}`))
      .expect(200);
    expect(await visible(org.chat.token)).to.deep.equal(['Beta']);
    const ids = await stored(env, 'group_agent_mappings').countDocuments({
      organizationId: org.organizationId,
      userGroupId: own,
    });
    expect(ids).to.equal(0);
  });

  it("does not apply a vanished group's mappings to its members, who are in the default group", async () => {
    const everyone = await group({ isDefault: true });
    await map(everyone, beta).expect(201);
    const own = await group();
    await map(own, alpha).expect(201);
    await join(own, org.chat.userId);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${alpha}`))
      .expect(200);
    // Only the group record is gone, as when the API dies right after the first write of a group's deletion:
    // the member still names the group and its mapping to Alpha is still stored.
    await env.deps.repos.tenant(org.organizationId).groups.remove(own);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${alpha}`))
      .expect(404);
    await as(env, org.chat.token)
      .get(org.path(`/agents/${beta}`))
      .expect(200);
    await as(env, org.chat.token)
      .post(org.path('/conversations'))
      .send({ agentId: alpha, message: 'hello' })
      .expect(invalidReference('agentId'));
  });

  it('applies the rule of the user to assume-role tokens, and of the creator to API keys', async () => {
    const g = await group();
    await map(g, alpha).expect(201);
    await join(g, org.chat.userId);
    const { token } = (
      await as(env, org.owner.token).post(org.path('/assume-role'), { userId: org.chat.userId }).expect(200)
    ).body;
    expect(await visible(token)).to.deep.equal(['Alpha']);
    await as(env, token)
      .get(org.path(`/agents/${beta}`))
      .expect(404);
    await as(env, token).get(org.path('/agents?all=true')).expect(403);
    // The owner's key acts as the owner.
    expect(await visible(org.apiKey)).to.deep.equal(['Alpha', 'Beta']);
  });

  it('manages group-agent mappings', async () => {
    const g = await group();
    const first = await map(g, alpha).expect(201);
    const again = await map(g, alpha).expect(200);
    expect(again.body).to.deep.equal(first.body);
    const concurrent = await Promise.all([map(g, beta), map(g, beta), map(g, beta)]);
    expect(concurrent.map((r) => r.status).sort()).to.deep.equal([200, 200, 201]);
    const defaultMapped = await map(g, 'default-assistant').expect(201);
    expect(defaultMapped.body.agentName).to.equal('Assistant');

    const list = await as(env, org.admin.token)
      .get(org.path(`/groups/${g}/agents`))
      .expect(200);
    expect(list.body.map((m: { agentId: string }) => m.agentId)).to.deep.equal([
      alpha,
      beta,
      'default-assistant',
    ]);

    const removed = await as(env, org.admin.token)
      .delete(org.path(`/groups/${g}/agents/${alpha}`))
      .expect(200);
    expect(removed.body).to.deep.equal({
      message: 'agent removed from user group',
      userGroupId: g,
      agentId: alpha,
    });
    await as(env, org.admin.token)
      .delete(org.path(`/groups/${g}/agents/${alpha}`))
      .expect(404);

    // Deleting an agent removes its mappings.
    await as(env, org.admin.token)
      .delete(org.path(`/agents/${beta}`))
      .expect(200);
    const after = await as(env, org.owner.token)
      .get(org.path(`/groups/${g}/agents`))
      .expect(200);
    expect(after.body.map((m: { agentId: string }) => m.agentId)).to.deep.equal(['default-assistant']);
    expect(
      await stored(env, 'group_agent_mappings').countDocuments({
        organizationId: org.organizationId,
        agentId: beta,
      }),
    ).to.equal(0);

    await map(g, 'agt_missing').expect(invalidReference('agentId'));
    await map('grp_missing', alpha).expect(404);
    await as(env, org.admin.token).get(org.path('/groups/grp_missing/agents')).expect(404);
    await map(g, '').expect(400);
    await as(env, org.chat.token)
      .get(org.path(`/groups/${g}/agents`))
      .expect(403);
    await as(env, org.chat.token)
      .post(org.path(`/groups/${g}/agents`), { agentId: alpha })
      .expect(403);
  });

  it('never maps across organizations', async () => {
    const g = await group();
    const other = await createTestOrg(env, 'Other Access Org');
    const theirAgent = (
      await as(env, other.owner.token)
        .post(other.path('/agents'), { ...base, name: 'Theirs' })
        .expect(201)
    ).body.id;
    await map(g, theirAgent).expect(invalidReference('agentId'));
    await as(env, other.owner.token)
      .post(other.path(`/groups/${g}/agents`), { agentId: theirAgent })
      .expect(404);
    await as(env, other.owner.token)
      .get(other.path(`/groups/${g}/agents`))
      .expect(404);
    await as(env, other.owner.token)
      .get(org.path(`/groups/${g}/agents`))
      .expect(401);
  });

  it('exposes the rule to other services', async () => {
    const g = await group();
    await map(g, beta).expect(201);
    const member = await addMember(env, org.organizationId, 'chat', 'Mapped');
    await join(g, member.userId);
    const ctx = await env.deps.authenticator.authenticate(`Bearer ${member.token}`, org.organizationId);
    const { access } = env.deps.services;
    expect(await access.accessibleAgentIds(ctx)).to.deep.equal([beta]);
    expect(await access.canAccessAgent(ctx, beta)).to.equal(true);
    expect(await access.canAccessAgent(ctx, alpha)).to.equal(false);
    expect((await access.getAccessibleAgent(ctx, beta)).name).to.equal('Beta');
    let error: unknown;
    await access.getAccessibleAgent(ctx, alpha).catch((e: unknown) => (error = e));
    expect(error).to.have.property('status', 404);
    const owner: RequestContext = { ...ctx, userId: org.owner.userId, role: 'owner' };
    expect(await access.accessibleAgentIds(owner)).to.equal(undefined);
    expect(await access.canAccessAgent(owner, alpha)).to.equal(true);
  });
});
