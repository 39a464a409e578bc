import { expect } from 'chai';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the chains repository keeps against the real database: chains found by ids or names only in the
 * organization; a touch moves a chain's updatedAt; a removed member's chains go to another member, another
 * organization's stay; a step is found under its own chain only, removed once, and a chain's steps go with it.
 */
const T0 = new Date('2026-01-01T00:00:00.000Z');

describe('chains repository against the database', function () {
  this.timeout(120_000);
  const world = orgPerTest('Chains store');
  const chains = () => world.env.deps.repos.tenant(world.org.organizationId).chains;
  const id = (s: string) => `${s}_${world.tag}`;
  const other = () => `org_other_${world.tag}`;
  const fields = (name: string) => ({
    name,
    description: '',
    llmInstructions: '',
    inputType: 'json' as const,
  });

  /** A chain of another organization, stored behind the repository's back. */
  const storeForeign = (chainId: string, name: string, creatorUserId: string) =>
    rawCollection<{ _id: string }>(world.env, 'action_chains').insertOne({
      _id: chainId,
      organizationId: other(),
      name,
      description: '',
      llmInstructions: '',
      inputType: 'json',
      creatorUserId,
      createdAt: T0,
      updatedAt: T0,
    } as { _id: string });

  it('finds chains by ids and by names only in the organization', async () => {
    const owner = world.org.owner.userId;
    await chains().create(id('chn_a'), owner, fields(id('Alpha')));
    await chains().create(id('chn_b'), owner, fields(id('Beta')));
    await chains().create(id('chn_c'), owner, fields(id('Gamma')));
    await storeForeign(id('chn_x'), id('Alpha'), owner);
    const names = (docs: Array<{ _id: string }>) => docs.map((d) => d._id).sort();
    expect(names(await chains().getMany([id('chn_a'), id('chn_x')]))).to.deep.equal([id('chn_a')]);
    expect(names(await chains().listByNames([id('Alpha'), id('Beta'), 'missing']))).to.deep.equal([
      id('chn_a'),
      id('chn_b'),
    ]);
  });

  it("moves a chain's updatedAt on a touch, and gives a member's chains to another, only in the organization", async () => {
    const leaving = `usr_leaving_${world.tag}`;
    await chains().create(id('chn_a'), leaving, fields('A'));
    await chains().create(id('chn_b'), leaving, fields('B'));
    await chains().create(id('chn_c'), world.org.owner.userId, fields('C'));
    await storeForeign(id('chn_x'), 'X', leaving);
    await rawCollection<{ _id: string; updatedAt: Date }>(world.env, 'action_chains').updateOne(
      { _id: id('chn_a') },
      { $set: { updatedAt: T0 } },
    );
    const touched = await chains().touch(id('chn_a'));
    expect((touched?.updatedAt as Date).getTime()).to.be.greaterThan(T0.getTime());

    expect(await chains().reassign(leaving, world.org.admin.userId)).to.equal(2);
    expect((await chains().get(id('chn_a')))?.creatorUserId).to.equal(world.org.admin.userId);
    expect((await chains().get(id('chn_c')))?.creatorUserId).to.equal(world.org.owner.userId);
    const foreign = await rawCollection<{ _id: string; creatorUserId: string }>(
      world.env,
      'action_chains',
    ).findOne({
      _id: id('chn_x'),
    });
    expect(foreign?.creatorUserId).to.equal(leaving);
  });

  it('finds a step under its own chain only, removes it once, and removes a chain’s steps with it', async () => {
    const owner = world.org.owner.userId;
    await chains().create(id('chn_a'), owner, fields('A'));
    await chains().create(id('chn_b'), owner, fields('B'));
    const step = (order: number) => ({
      stepOrder: order,
      name: `step ${order}`,
      description: '',
      instructions: 'Do it',
      reasoning: 'none' as const,
      enabled: true,
      inputSchemaJson: null,
      outputSchemaJson: null,
      showWholeChainState: false,
      forEachElement: null,
      toolChoice: null,
      runIf: null,
      failBeforeRunningIf: null,
      failAfterRunningIf: null,
    });
    await chains().createStep(id('chn_a'), id('stp_1'), step(1));
    await chains().createStep(id('chn_a'), id('stp_2'), step(2));
    await chains().createStep(id('chn_b'), id('stp_3'), step(1));

    expect((await chains().getStepById(id('stp_1')))?.actionChainId).to.equal(id('chn_a'));
    expect((await chains().getStep(id('chn_a'), id('stp_1')))?._id).to.equal(id('stp_1'));
    expect(await chains().getStep(id('chn_b'), id('stp_1'))).to.equal(null);

    expect(await chains().removeStep(id('chn_b'), id('stp_2'))).to.equal(false);
    expect(await chains().removeStep(id('chn_a'), id('stp_2'))).to.equal(true);
    expect(await chains().removeStep(id('chn_a'), id('stp_2'))).to.equal(false);

    await chains().removeSteps(id('chn_a'));
    expect(await chains().listSteps(id('chn_a'))).to.deep.equal([]);
    expect((await chains().listSteps(id('chn_b'))).map((s) => s._id)).to.deep.equal([id('stp_3')]);
  });
});
