import { expect } from 'chai';
import type { AppApprovalDoc } from '@lib/artifacts/app-approval.schema';
import type { NewArtifact } from '@lib/artifacts/artifacts.repository';
import { orgPerTest } from '@test/helpers/org';
import { rawCollection } from '@test/helpers/store';

/*
 * What the artifact repositories keep against the real database that the services' in-memory stand-ins cannot
 * show: a repeated create finds the first; the list's conversation, chain-run and name filters (names match
 * whatever their case, after a rename or a promotion too); the next pin position follows the highest one, not
 * the first stored; only a conversation or chain-run artifact is promoted; and an approval stored before its id
 * named the artifact still approves that artifact's version.
 */
describe('artifact repositories against the database', function () {
  this.timeout(120_000);
  const world = orgPerTest('Artifact store');
  const repos = () => world.env.deps.repos.tenant(world.org.organizationId);
  const id = (s: string) => `art_${world.tag}_${s}`;

  function fields(name: string, more: Partial<NewArtifact> = {}): NewArtifact {
    return {
      name,
      scope: 'library',
      source: 'upload',
      conversationId: null,
      creatorUserId: world.org.admin.userId,
      firstVersion: {
        versionId: `ver_${world.tag}_${name.length}`,
        version: 1,
        contentType: 'text/plain',
        sizeBytes: 1,
        sha256: '0'.repeat(64),
        key: `k/${world.tag}`,
        createdBy: world.org.admin.userId,
        agentId: null,
        createdAt: new Date(),
      },
      ...more,
    };
  }

  const listIds = async (filters: Record<string, unknown> = {}) =>
    (await repos().artifacts.list({ visibility: { all: true }, limit: 100, offset: 0, ...filters })).items
      .map((a) => a._id)
      .sort();

  it('answers a repeated create with the artifact the first one made', async () => {
    const first = await repos().artifacts.create(id('a'), fields('First'));
    expect(first.created).to.equal(true);
    const again = await repos().artifacts.create(id('a'), fields('Second'));
    expect(again.created).to.equal(false);
    expect(again.doc._id).to.equal(id('a'));
    expect(again.doc.name).to.equal('First');
  });

  it('filters the list by conversation and by chain run, and lists every artifact when neither is given', async () => {
    const conversationId = `cnv_${world.tag}`;
    const chainRunId = `run_${world.tag}`;
    await repos().artifacts.create(id('conv'), fields('c', { scope: 'conversation', conversationId }));
    await repos().artifacts.create(id('run'), fields('r', { scope: 'chain-run', chainRunId }));
    await repos().artifacts.create(id('lib'), fields('l'));
    expect(await listIds({ conversationId })).to.deep.equal([id('conv')]);
    expect(await listIds({ chainRunId })).to.deep.equal([id('run')]);
    expect(await listIds()).to.deep.equal([id('conv'), id('lib'), id('run')].sort());
  });

  it('matches a name whatever its case, after a rename and after a promotion too', async () => {
    await repos().artifacts.create(id('report'), fields('Quarterly Report'));
    await repos().artifacts.create(id('plan'), fields('notes'));
    await repos().artifacts.create(
      id('draft'),
      fields('draft', { scope: 'conversation', conversationId: `cnv_${world.tag}` }),
    );
    expect(await listIds({ q: 'REPORT' })).to.deep.equal([id('report')]);
    expect(await listIds({ q: 'report' })).to.deep.equal([id('report')]);
    // beyond ASCII too; and ß, whose upper case is two letters, matches only through the lower-cased key
    await repos().artifacts.create(id('umlaut'), fields('Ärger über Öl'));
    expect(await listIds({ q: 'ärger ÜBER' })).to.deep.equal([id('umlaut')]);

    await repos().artifacts.rename(id('plan'), 'Große Pläne');
    expect(await listIds({ q: 'große PLÄNE' })).to.deep.equal([id('plan')]);

    const promoted = await repos().artifacts.promote(id('draft'), world.org.admin.userId, 'Straßen Memo');
    expect(promoted?.scope).to.equal('library');
    expect(await listIds({ q: 'STRAßEN memo' })).to.deep.equal([id('draft')]);
  });

  it('promotes only a conversation or chain-run artifact', async () => {
    await repos().artifacts.create(id('lib'), fields('Library one'));
    expect(await repos().artifacts.promote(id('lib'), world.org.admin.userId)).to.equal(null);
    expect((await repos().artifacts.get(id('lib')))?.promotedBy).to.equal(null);
  });

  it('puts the next pin after the highest position, wherever that artifact is stored', async () => {
    const artifacts = repos().artifacts;
    expect(await artifacts.nextPinPosition()).to.equal(0);
    for (const s of ['a', 'b', 'c']) await artifacts.create(id(s), fields(s));
    await artifacts.pin(id('a'), 0);
    await artifacts.pin(id('b'), 1);
    await artifacts.pin(id('c'), 7);
    // the highest is the one stored last, then the one stored in the middle
    expect(await artifacts.nextPinPosition()).to.equal(8);
    await artifacts.setPinPositions([{ artifactId: id('c'), position: 0 }]);
    expect(await artifacts.nextPinPosition()).to.equal(2);
    // an unpinned artifact's place is no longer counted
    await artifacts.unpin(id('b'));
    expect(await artifacts.nextPinPosition()).to.equal(1);
  });

  it("approves an artifact's version through an approval stored under the version id alone", async () => {
    const versionId = `ver_${world.tag}`;
    await rawCollection<AppApprovalDoc>(world.env, 'app_approvals').insertOne({
      _id: versionId,
      organizationId: world.org.organizationId,
      artifactId: id('legacy'),
      versionId,
      manifestWorkflows: [],
      manifestTables: [],
      manifestSha256: '0'.repeat(64),
      workflowBindings: [],
      approvedBy: world.org.admin.userId,
      approvedAt: new Date(),
    });
    const approved = await repos().appApprovals.approvedAmong([
      { artifactId: id('legacy'), versionId },
      // the same version id under another artifact is not approved by it
      { artifactId: id('other'), versionId },
    ]);
    expect([...approved]).to.deep.equal([id('legacy')]);
  });
});
