import { expect } from 'chai';
import type { TestEnv } from '@test/helpers/env';
import { createTestAgent } from '@test/helpers/agents';
import { as, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';
import { useScheduleSuite } from '@test/schedules/schedule-suite';

describe('schedules: triggers, handlers and their Temporal Schedules', function () {
  this.timeout(120_000);
  const { suite, admin, createChain, createSchedule } = useScheduleSuite();
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(() => {
    ({ env, org } = suite);
  });

  it('keeps handlers: names filled in, PUT storing only instructions and inputMapping', async () => {
    const { triggerId } = await createSchedule();
    const chainId = await createChain();
    const { agentId } = await createTestAgent(env, org.organizationId, { name: 'Reporter' });
    const base = org.path(`/schedules/${triggerId}/handlers`);
    const chainHandler = await admin()
      .post(base, {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'Run the digest',
        inputMapping: { team: 'support' },
      })
      .expect(201);
    expect(chainHandler.body).to.include({
      triggerId,
      organizationId: org.organizationId,
      handlerType: 'action-chain',
      actionChainId: chainId,
      actionChainName: 'Digest',
      agentId: null,
      workflowId: null,
      creatorUserId: org.admin.userId,
    });
    expect(chainHandler.body.inputMapping).to.deep.equal({ team: 'support' });
    const workflowHandler = await admin()
      .post(base, { handlerType: 'workflow', workflowId: chainId, instructions: 'Again' })
      .expect(201);
    expect(workflowHandler.body).to.include({
      agentId: null,
      actionChainId: null,
      workflowId: chainId,
      workflowName: 'Digest',
      inputMapping: null,
    });
    // the handler runs with its creator's rights: an admin whose group may not use the agent cannot add it
    await admin()
      .post(base, { handlerType: 'agent', agentId, instructions: 'Write the report' })
      .expect(invalidReference('agentId'));
    const agentHandler = await as(env, org.owner.token)
      .post(base, { handlerType: 'agent', agentId, instructions: 'Write the report' })
      .expect(201);
    expect(agentHandler.body).to.include({ agentId, agentName: 'Reporter' });

    // what is missing or mixed up is refused
    // Each handler type names its one target in openapi.yaml (oneOf): the validator refuses the others.
    const refused = async (body: object, message: RegExp) =>
      expect((await admin().post(base, body).expect(400)).body.error.message).to.match(message);
    const oneOf = /request\/body must match exactly one schema in oneOf/;
    await refused({ handlerType: 'agent', instructions: 'x' }, /must have required property 'agentId'/);
    await refused({ handlerType: 'agent', instructions: 'x' }, oneOf);
    await refused({ handlerType: 'action-chain', agentId, instructions: 'x' }, oneOf);
    await refused({ handlerType: 'workflow', workflowId: chainId, agentId, instructions: 'x' }, oneOf);
    await admin()
      .post(base, { handlerType: 'workflow', workflowId: 'chn_nope', instructions: 'x' })
      .expect(invalidReference('workflowId'));
    await as(env, org.owner.token)
      .post(base, { handlerType: 'agent', agentId: 'agt_nope', instructions: 'x' })
      .expect(invalidReference('agentId'));
    await admin().post(base, { handlerType: 'robot', instructions: 'x' }).expect(400);

    const list = await admin().get(`${base}?limit=2&cursor=1`).expect(200);
    expect(list.body).to.include({ totalRows: 3, offset: 1 });
    expect(list.body.items.map((h: { handlerId: string }) => h.handlerId)).to.deep.equal([
      workflowHandler.body.handlerId,
      agentHandler.body.handlerId,
    ]);

    const id = chainHandler.body.handlerId as string;
    // a handler is reached only through its own trigger
    const { triggerId: sibling } = await createSchedule({ name: 'Sibling' });
    expect(
      (
        await admin()
          .get(org.path(`/schedules/${sibling}/handlers`))
          .expect(200)
      ).body.totalRows,
    ).to.equal(0);
    await admin()
      .get(org.path(`/schedules/${sibling}/handlers/${id}`))
      .expect(404);
    await admin()
      .put(org.path(`/schedules/${sibling}/handlers/${id}`), {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'x',
      })
      .expect(404);
    await admin()
      .delete(org.path(`/schedules/${sibling}/handlers/${id}`))
      .expect(404);
    const put = await admin()
      .put(`${base}/${id}`, {
        handlerType: 'action-chain',
        actionChainId: chainId,
        instructions: 'Run it differently',
        inputMapping: { team: 'sales' },
      })
      .expect(200);
    expect(put.body).to.include({ instructions: 'Run it differently', actionChainId: chainId });
    expect(put.body.inputMapping).to.deep.equal({ team: 'sales' });
    // type and target cannot change
    const otherChain = await createChain();
    await admin()
      .put(`${base}/${id}`, { handlerType: 'action-chain', actionChainId: otherChain, instructions: 'x' })
      .expect(400);
    const retyped = await admin()
      .put(`${base}/${id}`, { handlerType: 'workflow', workflowId: chainId, instructions: 'x' })
      .expect(400);
    expect(retyped.body.error.message).to.equal(
      `a handler's type and target cannot change: this is a 'action-chain' handler of ${chainId}; ` +
        'create a new handler instead',
    );
    expect((await admin().get(`${base}/${id}`).expect(200)).body.instructions).to.equal('Run it differently');

    // the list of schedules filtered by what their handlers run
    const { triggerId: unrelated } = await createSchedule({ name: 'Unrelated' });
    const ids = async (query: string) => {
      const res = await admin()
        .get(org.path(`/schedules?${query}`))
        .expect(200);
      return (res.body.items as Array<{ triggerId: string }>).map((t) => t.triggerId);
    };
    expect(await ids(`actionChainId=${chainId}`)).to.deep.equal([triggerId]);
    expect(await ids(`workflowId=${chainId}`)).to.deep.equal([triggerId]);
    expect(await ids(`agentId=${agentId}`)).to.deep.equal([triggerId]);
    expect(await ids(`agentId=${agentId}&actionChainId=${otherChain}`)).to.deep.equal([]);
    // all the filters given must hold
    expect(await ids(`actionChainId=${chainId}&workflowId=${chainId}`)).to.deep.equal([triggerId]);
    expect(await ids(`actionChainId=${chainId}&workflowId=${otherChain}`)).to.deep.equal([]);
    expect(await ids('')).to.deep.equal([triggerId, sibling, unrelated]);

    await admin().delete(`${base}/${id}`).expect(200, { success: true });
    await admin().get(`${base}/${id}`).expect(404);
    // deleting the trigger deletes its handlers, and no other trigger's
    const kept = await admin()
      .post(org.path(`/schedules/${unrelated}/handlers`), {
        handlerType: 'workflow',
        workflowId: otherChain,
        instructions: 'Stay',
      })
      .expect(201);
    await admin()
      .delete(org.path(`/schedules/${triggerId}`))
      .expect(200);
    await admin()
      .get(org.path(`/schedules/${unrelated}/handlers/${kept.body.handlerId}`))
      .expect(200);
    await admin().get(`${base}/${agentHandler.body.handlerId}`).expect(404);
    expect(await env.deps.repos.tenant(org.organizationId).scheduleHandlers.all(triggerId)).to.have.length(0);
  });
});
