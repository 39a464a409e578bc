import { expect } from 'chai';
import { ConflictError } from '@lib/errors';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the chain attachment repository keeps against the real database: a step's, a chain's and an agent's
 * attachments oldest first (ties by id) whatever order they were stored in, only the organization's own; a
 * second attachment of the same target is a conflict; each removal takes exactly what it names.
 */
const T1 = new Date('2026-01-01T00:00:01.000Z');
const T2 = new Date('2026-01-01T00:00:02.000Z');

interface Attachment {
  _id: string;
  organizationId: string;
  actionChainId: string;
  stepId: string;
  kind: 'agent' | 'knowledge-base' | 'tool';
  targetId: string;
  configJson: string | null;
  creatorUserId: string;
  createdAt: Date;
  updatedAt: Date;
}

describe('chain attachment repository against the database', function () {
  this.timeout(120_000);
  const world = orgPerTest('Chain attachments store');
  const repo = () => world.env.deps.repos.tenant(world.org.organizationId).chainAttachments;
  const other = () => `org_other_${world.tag}`;
  const id = (s: string) => `${s}_${world.tag}`;

  /** Stored as a repository would, with the creation time given; in the organization unless `organizationId`. */
  async function storeStep(
    stepId: string,
    kind: Attachment['kind'],
    targetId: string,
    createdAt: Date,
    organizationId = world.org.organizationId,
    actionChainId = id('chn'),
  ) {
    await rawCollection<Attachment>(world.env, 'action_chain_step_attachments').insertOne({
      _id: `${stepId}:${kind}:${targetId}`,
      organizationId,
      actionChainId,
      stepId,
      kind,
      targetId,
      configJson: null,
      creatorUserId: world.org.owner.userId,
      createdAt,
      updatedAt: createdAt,
    });
    return `${stepId}:${kind}:${targetId}`;
  }
  const ids = (docs: Array<{ _id: string }>) => docs.map((d) => d._id);

  it("lists a step's attachments oldest first, ties by id, of one kind when asked, only its own", async () => {
    const step = id('stp');
    const c = await storeStep(step, 'tool', 'c', T1);
    const a = await storeStep(step, 'agent', 'a', T2);
    const b = await storeStep(step, 'tool', 'b', T1);
    await storeStep(id('stp_other'), 'tool', 'b', T1);
    await storeStep(step, 'tool', 'x', T1, other());
    expect(ids(await repo().listForStep(step))).to.deep.equal([b, c, a]);
    expect(ids(await repo().listForStep(step, 'tool'))).to.deep.equal([b, c]);
  });

  it("lists a chain's attachments over its steps, oldest first, only the organization's", async () => {
    const c = await storeStep(id('stp_1'), 'tool', 'c', T1);
    const a = await storeStep(id('stp_2'), 'agent', 'a', T2);
    const b = await storeStep(id('stp_2'), 'tool', 'b', T1);
    await storeStep(id('stp_3'), 'tool', 'd', T1, world.org.organizationId, id('chn_other'));
    await storeStep(id('stp_1'), 'tool', 'e', T1, other());
    // ties by id: the first step's before the second's
    expect(ids(await repo().listForChain(id('chn')))).to.deep.equal([c, b, a]);
  });

  it('refuses a second attachment of the same target to a step or of the same chain to an agent', async () => {
    const fields = {
      actionChainId: id('chn'),
      stepId: id('stp'),
      kind: 'tool' as const,
      targetId: 'web_search',
      configJson: null,
      creatorUserId: world.org.owner.userId,
    };
    await repo().attachToStep(fields);
    const refusal = await repo()
      .attachToStep(fields)
      .catch((err: unknown) => err);
    expect(refusal).to.be.instanceOf(ConflictError);
    expect((refusal as Error).message).to.equal('this tool is already attached to the step');

    await repo().attachToAgent(id('agt'), id('chn'), world.org.owner.userId);
    const again = await repo()
      .attachToAgent(id('agt'), id('chn'), world.org.owner.userId)
      .catch((err: unknown) => err);
    expect(again).to.be.instanceOf(ConflictError);
    expect((again as Error).message).to.equal('this chain is already attached to the agent');
  });

  it("removes a step's attachments, and a target's of its kind, and nothing else", async () => {
    const step = id('stp');
    await storeStep(step, 'tool', 'a', T1);
    await storeStep(step, 'agent', 'shared', T1);
    const kept = await storeStep(id('stp_other'), 'agent', 'shared', T1);
    const keptKb = await storeStep(id('stp_other'), 'knowledge-base', 'shared', T2);
    const foreign = await storeStep(step, 'agent', 'other-shared', T1, other());
    await repo().removeForStep(step);
    expect(await repo().listForStep(step)).to.deep.equal([]);
    expect(ids(await repo().listForStep(id('stp_other')))).to.deep.equal([kept, keptKb]);

    await repo().removeTarget('agent', 'shared');
    await repo().removeTarget('agent', 'other-shared');
    expect(ids(await repo().listForStep(id('stp_other')))).to.deep.equal([keptKb]);
    const stored = rawCollection<Attachment>(world.env, 'action_chain_step_attachments');
    expect(await stored.countDocuments({ _id: foreign, organizationId: other() })).to.equal(1);
  });

  it("lists an agent's chains oldest first, detaches one, and removes an agent's or a chain's attachments", async () => {
    const agents = rawCollection<{
      _id: string;
      organizationId: string;
      agentId: string;
      actionChainId: string;
      creatorUserId: string;
      createdAt: Date;
      updatedAt: Date;
    }>(world.env, 'agent_action_chains');
    const agent = id('agt');
    const store = (
      agentId: string,
      chain: string,
      createdAt: Date,
      organizationId = world.org.organizationId,
    ) =>
      agents.insertOne({
        _id: `${agentId}:${chain}`,
        organizationId,
        agentId,
        actionChainId: chain,
        creatorUserId: world.org.owner.userId,
        createdAt,
        updatedAt: createdAt,
      });
    await store(agent, 'chn_c', T1);
    await store(agent, 'chn_a', T2);
    await store(agent, 'chn_b', T1);
    await store(id('agt_other'), 'chn_a', T1);
    await store(agent, 'chn_z', T1, other());
    expect((await repo().listForAgent(agent)).map((a) => a.actionChainId)).to.deep.equal([
      'chn_b',
      'chn_c',
      'chn_a',
    ]);

    expect(await repo().detachFromAgent(agent, 'chn_c')).to.equal(true);
    expect(await repo().detachFromAgent(agent, 'chn_c')).to.equal(false);
    expect((await repo().listForAgent(agent)).map((a) => a.actionChainId)).to.deep.equal(['chn_b', 'chn_a']);

    // A chain's removal takes its agent attachments and its steps' attachments.
    await storeStep(id('stp'), 'tool', 't', T1, world.org.organizationId, 'chn_a');
    const keptStep = await storeStep(id('stp_b'), 'tool', 't', T1, world.org.organizationId, 'chn_b');
    await repo().removeForChain('chn_a');
    expect((await repo().listForAgent(agent)).map((a) => a.actionChainId)).to.deep.equal(['chn_b']);
    expect(await repo().listForAgent(id('agt_other'))).to.deep.equal([]);
    expect(ids(await repo().listForChain('chn_a'))).to.deep.equal([]);
    expect(ids(await repo().listForChain('chn_b'))).to.deep.equal([keptStep]);

    // An agent's removal takes its chains and every step's attachment of it.
    await storeStep(id('stp_b'), 'agent', agent, T2, world.org.organizationId, 'chn_b');
    await store(id('agt_kept'), 'chn_b', T1);
    await repo().removeForAgent(agent);
    expect(await repo().listForAgent(agent)).to.deep.equal([]);
    expect((await repo().listForAgent(id('agt_kept'))).map((a) => a.actionChainId)).to.deep.equal(['chn_b']);
    expect(ids(await repo().listForChain('chn_b'))).to.deep.equal([keptStep]);
    expect(await agents.countDocuments({ organizationId: other() })).to.equal(1);
  });
});
