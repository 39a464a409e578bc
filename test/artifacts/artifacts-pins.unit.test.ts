import { expect } from 'chai';
import { artifactsWorld, ctxOf, ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * Pins and the list (docs/artifacts-and-apps.md): HTML artifacts only; a new pin goes last; reordering gives each
 * listed id its index (members reorder only their own); the list shows pinned ones in pin order, otherwise the
 * newest change first, with whether each current version is approved.
 */
const alice = ctxOf('chat', 'usr_alice');
const bob = ctxOf('chat', 'usr_bob');
const admin = ctxOf('admin', 'usr_admin');
const page = { limit: 20, offset: 0 };

describe('artifact pins and list', () => {
  let w: ArtifactsWorld;
  const upload = async (ctx = alice, name = 'App', contentType = 'text/html') =>
    (await w.artifacts.upload(ctx, { name, contentType, content: 'x' })).artifact.artifactId;
  const pinned = async (ctx = admin) =>
    (await w.artifacts.list(ctx, { ...page, pinned: true })).items.map((a) => [a.name, a.pinPosition]);
  beforeEach(() => {
    w = artifactsWorld();
  });

  it('pins HTML artifacts after the others, and pinning again changes nothing', async () => {
    const a = await upload(alice, 'A');
    const b = await upload(alice, 'B', 'Text/HTML; charset=utf-8');
    const first = await w.artifacts.pin(alice, a);
    expect(first.artifact.pinPosition).to.equal(0);
    expect(first.artifact.pinnedAt).to.be.a('string');
    expect((await w.artifacts.pin(alice, b)).artifact.pinPosition).to.equal(1);
    const again = await w.artifacts.pin(alice, a);
    expect(again.artifact).to.deep.include({ pinPosition: 0, pinnedAt: first.artifact.pinnedAt });
    expect(await pinned()).to.deep.equal([
      ['A', 0],
      ['B', 1],
    ]);
  });

  it('refuses to pin what is not HTML', async () => {
    const md = await upload(alice, 'Notes', 'text/markdown');
    expect(await refusal(w.artifacts.pin(alice, md))).to.deep.equal({
      status: 400,
      code: 'validation_failed',
      message: 'only HTML artifacts can be pinned; this one is text/markdown',
      details: undefined,
    });
  });

  it('unpins, keeping the artifact and its approval state', async () => {
    const a = await upload();
    await w.artifacts.pin(alice, a);
    expect(await w.artifacts.unpin(alice, a)).to.deep.equal({ success: true });
    expect((await w.artifacts.get(alice, a)).artifact).to.deep.include({
      pinnedAt: null,
      pinPosition: null,
      versionCount: 1,
    });
    expect(await pinned()).to.deep.equal([]);
    // the next pin starts again at 0 when nothing else is pinned
    expect((await w.artifacts.pin(alice, a)).artifact.pinPosition).to.equal(0);
  });

  it('reorders by index, the first of repeated ids winning; a member moves only their own pins', async () => {
    const a = await upload(alice, 'A');
    const b = await upload(alice, 'B');
    const c = await upload(bob, 'C');
    const loose = await upload(alice, 'Loose');
    for (const [ctx, id] of [
      [alice, a],
      [alice, b],
      [bob, c],
    ] as const)
      await w.artifacts.pin(ctx, id);
    expect(await w.artifacts.reorderPins(alice, [c, loose, b, a, b])).to.deep.equal({ success: true });
    // alice's own pins take indexes 2 and 3; bob's C keeps 2; the unpinned one stays unpinned
    expect(Object.fromEntries(await pinned())).to.deep.equal({ C: 2, B: 2, A: 3 });
    expect((await w.artifacts.get(alice, loose)).artifact.pinPosition).to.equal(null);
    await w.artifacts.reorderPins(admin, [c, a, b]);
    expect(await pinned()).to.deep.equal([
      ['C', 0],
      ['A', 1],
      ['B', 2],
    ]);
  });

  it('lists the newest change first with filters, and says which current versions are approved', async () => {
    const a = await upload(alice, 'Leads report');
    const b = await upload(alice, 'Costs', 'text/plain');
    const c = await upload(bob, 'leads board');
    await w.artifacts.rename(alice, a, 'Leads report');
    await w.repos.tenant(ORG).appApprovals.put({
      artifactId: c,
      versionId: (await w.artifacts.get(admin, c)).artifact.currentVersion.versionId,
      manifestWorkflows: [],
      manifestTables: [],
      manifestSha256: 'x',
      workflowBindings: [],
      approvedBy: 'usr_admin',
      approvedAt: new Date(),
    });
    const all = await w.artifacts.list(admin, page);
    expect(all.items.map((i) => [i.artifactId, i.currentVersionApproved])).to.deep.equal([
      [a, false],
      [c, true],
      [b, false],
    ]);
    expect(all).to.deep.include({ totalRows: 3, offset: 0 });
    expect(all.items[0]).to.not.have.property('versions');
    const second = await w.artifacts.list(admin, { limit: 1, offset: 1 });
    expect(second).to.deep.include({ totalRows: 3, offset: 1 });
    expect(second.items.map((i) => i.artifactId)).to.deep.equal([c]);
    const named = await w.artifacts.list(admin, { ...page, q: 'LEADS', creatorUserId: 'usr_bob' });
    expect(named.items.map((i) => i.artifactId)).to.deep.equal([c]);
    const plain = await w.artifacts.list(admin, { ...page, contentType: 'text/plain', scope: 'library' });
    expect(plain.items.map((i) => i.artifactId)).to.deep.equal([b]);
  });
});
