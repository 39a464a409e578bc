import { expect } from 'chai';
import { artifactsWorld, ctxOf, OTHER_ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * Who reaches an artifact (docs/artifacts-and-apps.md, "Who reaches what"): admins and owners read and change
 * every artifact; other members read what they created and what is shared with them or their user group (a
 * member without a group is in the default group), and change only their own. Unreadable is 404 like
 * missing; readable but not changeable is 403.
 */
const owner = ctxOf('owner', 'usr_owner');
const admin = ctxOf('admin', 'usr_admin');
const alice = ctxOf('chat', 'usr_alice');
const bob = ctxOf('chat', 'usr_bob');
const stranger = ctxOf('owner', 'usr_eve', OTHER_ORG);

const NOT_FOUND = { status: 404, code: 'not_found', message: 'artifact not found', details: undefined };
const FORBIDDEN = {
  status: 403,
  code: 'forbidden',
  message: 'only the artifact’s creator, an admin or an owner may change it',
  details: undefined,
};
const html = { contentType: 'text/html', content: '<h1>Leads</h1>' };

async function aliceArtifact(w: ArtifactsWorld) {
  const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
  return artifact.artifactId;
}

describe('artifact access', () => {
  let w: ArtifactsWorld;
  let id: string;
  beforeEach(async () => {
    w = artifactsWorld();
    w.members.org_a = { usr_alice: 'chat', usr_bob: 'chat', usr_carol: 'chat' };
    id = await aliceArtifact(w);
  });

  it('lets the creator, an admin and an owner read and change it', async () => {
    for (const ctx of [alice, admin, owner]) {
      expect((await w.artifacts.get(ctx, id)).artifact.artifactId).to.equal(id);
      expect((await w.artifacts.rename(ctx, id, `by ${ctx.userId}`)).artifact.name).to.equal(
        `by ${ctx.userId}`,
      );
    }
  });

  it('hides an unshared artifact from another member as not found, whatever they try', async () => {
    expect(await refusal(w.artifacts.get(bob, id))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.downloadLink(bob, id))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.publish(bob, id, html))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.share(bob, id, { userIds: ['usr_bob'] }))).to.deep.equal(NOT_FOUND);
    expect(
      await refusal(w.artifacts.sendToKnowledgeBase(bob, id, { knowledgeBaseId: 'kb_1' })),
    ).to.deep.equal(NOT_FOUND);
    expect(w.objects.links).to.have.length(0);
    expect(w.kbCalls).to.have.length(0);
  });

  it('hides it from another organization, even from its owner', async () => {
    expect(await refusal(w.artifacts.get(stranger, id))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.downloadLink(stranger, id))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.rename(stranger, id, 'mine'))).to.deep.equal(NOT_FOUND);
    expect((await w.artifacts.list(stranger, { limit: 20, offset: 0 })).totalRows).to.equal(0);
  });

  it('lets a member it is shared with read and download it, but change nothing (403)', async () => {
    await w.artifacts.share(alice, id, { userIds: ['usr_bob'] });
    const read = (await w.artifacts.get(bob, id)).artifact;
    expect(read.artifactId).to.equal(id);
    expect(read.versions!.map((v) => v.version)).to.deep.equal([1]);
    expect((await w.artifacts.downloadLink(bob, id)).artifactId).to.equal(id);
    for (const change of [
      w.artifacts.publish(bob, id, html),
      w.artifacts.rename(bob, id, 'Mine'),
      w.artifacts.pin(bob, id),
      w.artifacts.unpin(bob, id),
      w.artifacts.share(bob, id, { userIds: [] }),
      w.artifacts.promote(bob, id, {}),
    ])
      expect(await refusal(change)).to.deep.equal(FORBIDDEN);
    expect((await w.artifacts.get(alice, id)).artifact).to.include({ name: 'Leads', versionCount: 1 });
    // another member is still not in the share
    expect(await refusal(w.artifacts.get(ctxOf('chat', 'usr_carol'), id))).to.deep.equal(NOT_FOUND);
    // shared with no group: deciding needs no look-up of anyone's group
    expect(w.groupLookups).to.deep.equal([]);
  });

  it('lets members of a shared group read it, and only them', async () => {
    w.effectiveGroups.usr_bob = 'grp_sales';
    await w.artifacts.share(alice, id, { groupIds: ['grp_sales'] });
    expect((await w.artifacts.get(bob, id)).artifact.sharedWith).to.deep.equal({
      userIds: [],
      groupIds: ['grp_sales'],
    });
    // carol has no group of her own: she is in the default group, which is not shared
    expect(await refusal(w.artifacts.get(ctxOf('chat', 'usr_carol'), id))).to.deep.equal(NOT_FOUND);
    expect(await refusal(w.artifacts.publish(bob, id, html))).to.deep.equal(FORBIDDEN);
  });

  it('counts a member without a group in the default group', async () => {
    w.effectiveGroups.usr_bob = 'grp_sales';
    await w.artifacts.share(alice, id, { groupIds: ['grp_default'] });
    expect((await w.artifacts.get(ctxOf('chat', 'usr_carol'), id)).artifact.artifactId).to.equal(id);
    expect(await refusal(w.artifacts.get(bob, id))).to.deep.equal(NOT_FOUND);
  });

  it('lists for a member what they made and what is shared with them or their group', async () => {
    const bobs = (await w.artifacts.upload(bob, { name: 'Bob notes', ...html })).artifact.artifactId;
    const carols = (await w.artifacts.upload(ctxOf('chat', 'usr_carol'), { name: 'Carol', ...html })).artifact
      .artifactId;
    const toGroup = await aliceArtifact(w);
    w.effectiveGroups.usr_bob = 'grp_sales';
    await w.artifacts.share(alice, id, { userIds: ['usr_bob'] });
    await w.artifacts.share(alice, toGroup, { groupIds: ['grp_sales'] });
    const ids = async (ctx: typeof bob) =>
      (await w.artifacts.list(ctx, { limit: 20, offset: 0 })).items.map((a) => a.artifactId).sort();
    expect(await ids(bob)).to.deep.equal([bobs, id, toGroup].sort());
    expect(await ids(admin)).to.deep.equal([bobs, carols, id, toGroup].sort());
    expect(await ids(ctxOf('chat', 'usr_carol'))).to.deep.equal([carols]);
  });
});
