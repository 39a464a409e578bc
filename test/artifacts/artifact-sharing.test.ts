import { expect } from 'chai';
import request from 'supertest';
import { specOperations } from '@api/operations';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, addMember, createTestOrg, type TestOrg } from '@test/helpers/org';
import { appHtml, download, uploadArtifact } from '@test/helpers/artifacts';

describe('artifacts: library, versions, sharing, pins', () => {
  let env: TestEnv;
  let org: TestOrg;
  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Artifacts Org');
  });

  it('shows members only what they made or what was shared with them or their group; admins see all', async () => {
    const other = await addMember(env, org.organizationId, 'chat', 'Other Chat');
    const mine = await uploadArtifact(env, org, org.chat.token, { name: 'mine' });
    const secret = await uploadArtifact(env, org, org.admin.token, { name: 'secret' });
    const ids = async (token: string, query = '') =>
      (
        (
          await as(env, token)
            .get(org.path(`/artifacts${query}`))
            .expect(200)
        ).body.items as Array<{
          artifactId: string;
        }>
      ).map((a) => a.artifactId);
    expect(await ids(org.chat.token)).to.deep.equal([mine.artifactId]);
    expect(await ids(other.token)).to.deep.equal([]);
    expect(await ids(org.owner.token)).to.have.members([mine.artifactId, secret.artifactId]);
    await as(env, other.token)
      .get(org.path(`/artifacts/${mine.artifactId}`))
      .expect(404);
    await as(env, org.chat.token)
      .get(org.path(`/artifacts/${secret.artifactId}`))
      .expect(404);
    // nor its bytes: a download link for another member's unshared artifact is the same 404
    for (const [token, artifactId] of [
      [other.token, mine.artifactId],
      [org.chat.token, secret.artifactId],
    ] as const) {
      const refused = await as(env, token)
        .post(org.path(`/artifacts/${artifactId}/download-link`))
        .expect(404);
      expect(refused.body.error.code).to.equal('not_found');
      expect(refused.body).to.not.have.property('downloadLink');
    }

    // shared with a user: they read it, but changing it stays with its creator and managers
    const shared = await as(env, org.chat.token)
      .put(org.path(`/artifacts/${mine.artifactId}/share`), { userIds: [other.userId] })
      .expect(200);
    expect(shared.body.artifact.sharedWith).to.deep.equal({ userIds: [other.userId], groupIds: [] });
    expect(await ids(other.token)).to.deep.equal([mine.artifactId]);
    await download(env, org, other.token, mine.artifactId);
    for (const res of [
      await as(env, other.token).put(org.path(`/artifacts/${mine.artifactId}`), { name: 'mine now' }),
      await as(env, other.token).post(org.path(`/artifacts/${mine.artifactId}/versions`), {
        contentType: 'text/plain',
        content: 'x',
      }),
      await as(env, other.token).put(org.path(`/artifacts/${mine.artifactId}/pin`)),
      await as(env, other.token).delete(org.path(`/artifacts/${mine.artifactId}/pin`)),
      await as(env, other.token).put(org.path(`/artifacts/${mine.artifactId}/share`), {}),
    ])
      expect(res.status).to.equal(403);
    // an admin changes anyone's artifact
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${mine.artifactId}`), { name: 'renamed' })
      .expect(200);

    // shared with a group: its members read it; members without a group are in the default group
    const group = await as(env, org.owner.token)
      .post(org.path('/groups'), { name: 'Sales', description: 'sales team' })
      .expect(201);
    await as(env, org.owner.token)
      .post(org.path(`/groups/${group.body.userGroupId}/users`), { userId: other.userId })
      .expect(200);
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${secret.artifactId}/share`), { groupIds: [group.body.userGroupId] })
      .expect(200);
    expect(await ids(other.token)).to.have.members([mine.artifactId, secret.artifactId]);
    expect(await ids(org.chat.token)).to.deep.equal([mine.artifactId]);
    await as(env, org.chat.token)
      .get(org.path(`/artifacts/${secret.artifactId}`))
      .expect(404);
    // chat has no group: sharing with the default group reaches them
    const everyone = await as(env, org.owner.token)
      .post(org.path('/groups'), { name: 'Everyone', description: 'default', isDefault: true })
      .expect(201);
    const third = await uploadArtifact(env, org, org.admin.token, { name: 'for everyone' });
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${third.artifactId}/share`), { groupIds: [everyone.body.userGroupId] })
      .expect(200);
    expect(await ids(org.chat.token)).to.have.members([mine.artifactId, third.artifactId]);
    await as(env, org.chat.token)
      .get(org.path(`/artifacts/${third.artifactId}`))
      .expect(200);

    const unknown = await as(env, org.admin.token)
      .put(org.path(`/artifacts/${secret.artifactId}/share`), {
        userIds: ['usr_nobody'],
        groupIds: ['grp_none'],
      })
      .expect(400);
    expect(unknown.body.error.code).to.equal('invalid_reference');
    expect(unknown.body.error.message).to.equal(
      'userIds: usr_nobody are not members of this organization; groupIds: grp_none do not exist',
    );
    expect(unknown.body.error.details).to.deep.equal({
      unknownUsers: ['usr_nobody'],
      unknownGroups: ['grp_none'],
    });
  });

  it('filters and pages the list', async () => {
    const a = await uploadArtifact(env, org, org.admin.token, {
      name: 'Alpha report',
      contentType: 'text/markdown',
      content: '#',
    });
    const b = await uploadArtifact(env, org, org.admin.token, { name: 'Beta app' });
    const c = await uploadArtifact(env, org, org.chat.token, { name: 'Gamma app' });
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${b.artifactId}/pin`))
      .expect(200);
    const list = async (query: string) =>
      (
        await as(env, org.admin.token)
          .get(org.path(`/artifacts${query}`))
          .expect(200)
      ).body as {
        items: Array<{ artifactId: string }>;
        totalRows: number;
        offset: number;
      };
    const names = async (query: string) => (await list(query)).items.map((i) => i.artifactId);
    expect(await names('?q=APP')).to.have.members([b.artifactId, c.artifactId]);
    expect(await names('?contentType=text/markdown')).to.deep.equal([a.artifactId]);
    expect(await names('?pinned=true')).to.deep.equal([b.artifactId]);
    expect(await names('?pinned=false')).to.have.members([a.artifactId, c.artifactId]);
    expect(await names(`?creatorUserId=${org.chat.userId}`)).to.deep.equal([c.artifactId]);
    expect(await names('?scope=conversation')).to.deep.equal([]);
    expect(await names('?scope=library')).to.have.length(3);
    const page = await list('?limit=2&cursor=1');
    expect(page).to.deep.include({ totalRows: 3, offset: 1 });
    expect(page.items).to.have.length(2);
    // most recently changed first: pinning b changed it after c was made
    expect(await names('')).to.deep.equal([b.artifactId, c.artifactId, a.artifactId]);
    for (const bad of ['?scope=everywhere', '?pinned=maybe', '?limit=0', '?q=a%00b', '?nope=1'])
      expect((await as(env, org.admin.token).get(org.path(`/artifacts${bad}`))).status, bad).to.equal(400);
  });

  it('pins HTML artifacts only, unpins without touching versions, and reorders the pinned list', async () => {
    const text = await uploadArtifact(env, org, org.admin.token, { contentType: 'text/plain', content: 'x' });
    const res = await as(env, org.admin.token)
      .put(org.path(`/artifacts/${text.artifactId}/pin`))
      .expect(400);
    expect(res.body.error.message).to.contain('HTML');
    const apps = [];
    for (const name of ['one', 'two', 'three']) {
      const a = await uploadArtifact(env, org, org.admin.token, { name });
      const pinned = await as(env, org.admin.token)
        .put(org.path(`/artifacts/${a.artifactId}/pin`))
        .expect(200);
      expect(pinned.body.artifact.pinnedAt).to.be.a('string');
      apps.push(pinned.body.artifact as { artifactId: string; pinnedAt: string; pinPosition: number });
    }
    expect(apps.map((a) => a.pinPosition)).to.deep.equal([0, 1, 2]);
    // pinning again changes nothing
    const again = await as(env, org.admin.token)
      .put(org.path(`/artifacts/${apps[0]!.artifactId}/pin`))
      .expect(200);
    expect(again.body.artifact).to.deep.include({ pinnedAt: apps[0]!.pinnedAt, pinPosition: 0 });
    const pinned = async () =>
      (
        (await as(env, org.admin.token).get(org.path('/artifacts?pinned=true')).expect(200)).body
          .items as Array<{
          artifactId: string;
          pinPosition: number;
        }>
      ).map((a) => [a.artifactId, a.pinPosition]);
    const [one, two, three] = apps.map((a) => a.artifactId);
    const other = await createTestOrg(env, 'Other Org');
    const foreign = await uploadArtifact(env, other, other.admin.token);
    await as(env, other.admin.token)
      .put(other.path(`/artifacts/${foreign.artifactId}/pin`))
      .expect(200);
    await as(env, org.admin.token)
      .post(org.path('/artifacts/pins/reorder'), {
        orderedArtifactIds: [three, 'art_unknown', text.artifactId, foreign.artifactId, one, two, three],
      })
      .expect(200, { success: true });
    expect(await pinned()).to.deep.equal([
      [three, 0],
      [one, 4],
      [two, 5],
    ]);
    // the other organization's pin is untouched
    const theirs = await as(env, other.admin.token)
      .get(other.path(`/artifacts/${foreign.artifactId}`))
      .expect(200);
    expect(theirs.body.artifact.pinPosition).to.equal(0);

    await as(env, org.admin.token)
      .delete(org.path(`/artifacts/${one}/pin`))
      .expect(200, { success: true });
    expect(await pinned()).to.deep.equal([
      [three, 0],
      [two, 5],
    ]);
    const unpinned = await as(env, org.admin.token)
      .get(org.path(`/artifacts/${one}`))
      .expect(200);
    expect(unpinned.body.artifact).to.deep.include({ pinnedAt: null, pinPosition: null, versionCount: 1 });
    // a member other than admins and owners reorders only their own pins
    const own = await uploadArtifact(env, org, org.chat.token, { name: 'own' });
    await as(env, org.chat.token)
      .put(org.path(`/artifacts/${own.artifactId}/pin`))
      .expect(200);
    await as(env, org.chat.token)
      .post(org.path('/artifacts/pins/reorder'), { orderedArtifactIds: [own.artifactId, two, three] })
      .expect(200);
    // ties in position keep pin order
    expect(await pinned()).to.deep.equal([
      [three, 0],
      [own.artifactId, 0],
      [two, 5],
    ]);
  });

  it('keeps artifacts inside the organization on every route', async () => {
    const a = await uploadArtifact(env, org, org.admin.token, {
      name: 'Ours',
      content: appHtml({ tables: [] }),
    });
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${a.artifactId}/pin`))
      .expect(200);
    const other = await createTestOrg(env, 'Other Org');
    const theirs = (suffix = '') => other.path(`/artifacts/${a.artifactId}${suffix}`);
    const asOther = as(env, other.owner.token);
    const attempts = [
      asOther.get(theirs()),
      asOther.put(theirs(), { name: 'stolen' }),
      asOther.post(theirs('/versions'), { contentType: 'text/plain', content: 'x' }),
      asOther.put(theirs('/pin')),
      asOther.delete(theirs('/pin')),
      asOther.put(theirs('/share'), { userIds: [other.owner.userId] }),
      asOther.post(theirs('/promote')),
      asOther.post(theirs('/download-link')),
      asOther.get(theirs('/app-manifest')),
      asOther.put(theirs('/app-manifest')),
      asOther.post(theirs('/app-session')),
    ];
    for (const [i, res] of (await Promise.all(attempts)).entries()) {
      expect(res.status, `attempt ${i}`).to.equal(404);
      expect(res.body.error.code).to.equal('not_found');
    }
    const listed = await asOther.get(other.path('/artifacts')).expect(200);
    expect(listed.body).to.deep.include({ items: [], totalRows: 0 });
    // another organization's token on this organization's paths
    for (const res of await Promise.all([
      asOther.get(org.path('/artifacts')),
      asOther.get(org.path(`/artifacts/${a.artifactId}`)),
      asOther.post(org.path('/artifacts'), { name: 'x', contentType: 'text/plain', content: 'x' }),
      asOther.post(org.path('/artifacts/pins/reorder'), { orderedArtifactIds: [a.artifactId] }),
    ]))
      expect(res.status).to.equal(401);
    const after = await as(env, org.admin.token)
      .get(org.path(`/artifacts/${a.artifactId}`))
      .expect(200);
    expect(after.body.artifact).to.deep.include({
      name: 'Ours',
      versionCount: 1,
      scope: 'library',
      pinPosition: 0,
    });
    expect(after.body.artifact.sharedWith).to.deep.equal({ userIds: [], groupIds: [] });
  });

  it('refuses every artifact operation without credentials', async () => {
    const a = await uploadArtifact(env, org, org.admin.token);
    const operations = specOperations().filter((op) => op.path.includes('/artifacts'));
    expect(operations.length).to.be.at.least(19);
    for (const op of operations) {
      const path = op.path
        .replace(':organizationId', org.organizationId)
        .replace(':artifactId', a.artifactId)
        .replace(':tableName', 'leads')
        .replace(':workflowId', 'chn_x');
      const res = await request(env.app)[op.method](path);
      expect(res.status, `${op.method} ${op.path}`).to.equal(401);
      expect(res.body.error.code, op.operationId).to.be.a('string');
    }
  });
});
