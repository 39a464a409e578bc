import { expect } from 'chai';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { invalidReference } from '@test/helpers/errors';

describe('user groups', () => {
  let env: TestEnv;
  let org: TestOrg;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Groups Org');
  });

  const create = (body: object, token = org.admin.token) => as(env, token).post(org.path('/groups'), body);

  it('creates, reads, replaces, lists and deletes groups', async () => {
    const created = await create({ name: 'Sales', description: 'Sales team' }).expect(201);
    expect(created.body).to.include({
      name: 'Sales',
      description: 'Sales team',
      isDefault: false,
      fullAccess: false,
    });
    expect(created.body.organizationId).to.equal(org.organizationId);
    const id = created.body.userGroupId;

    const got = await as(env, org.owner.token)
      .get(org.path(`/groups/${id}`))
      .expect(200);
    expect(got.body).to.deep.equal(created.body);

    const replaced = await as(env, org.admin.token)
      .put(org.path(`/groups/${id}`), {
        name: 'Sales AU',
        description: 'Sales in AU',
        isDefault: false,
        fullAccess: true,
      })
      .expect(200);
    expect(replaced.body).to.include({ name: 'Sales AU', fullAccess: true });

    await create({ name: 'Support', description: '' }).expect(201);
    const list = await as(env, org.admin.token).get(org.path('/groups?limit=1')).expect(200);
    expect(list.body).to.deep.include({ totalRows: 2, offset: 0 });
    expect(list.body.items.map((g: { name: string }) => g.name)).to.deep.equal(['Sales AU']);
    const search = await as(env, org.admin.token).get(org.path('/groups?q=supp')).expect(200);
    expect(search.body.items.map((g: { name: string }) => g.name)).to.deep.equal(['Support']);

    const deleted = await as(env, org.admin.token)
      .delete(org.path(`/groups/${id}`))
      .expect(200);
    expect(deleted.body).to.deep.equal({ message: 'user group deleted', userGroupId: id });
    await as(env, org.admin.token)
      .get(org.path(`/groups/${id}`))
      .expect(404);
  });

  it('keeps at most one default group', async () => {
    const a = await create({ name: 'A', description: '', isDefault: true }).expect(201);
    const b = await create({ name: 'B', description: '', isDefault: true }).expect(201);
    const list = await as(env, org.admin.token).get(org.path('/groups')).expect(200);
    const defaults = list.body.items
      .filter((g: { isDefault: boolean }) => g.isDefault)
      .map((g: { userGroupId: string }) => g.userGroupId);
    expect(defaults).to.deep.equal([b.body.userGroupId]);

    await as(env, org.admin.token)
      .put(org.path(`/groups/${a.body.userGroupId}`), {
        name: 'A',
        description: '',
        isDefault: true,
        fullAccess: false,
      })
      .expect(200);
    const after = await as(env, org.admin.token)
      .get(org.path(`/groups/${b.body.userGroupId}`))
      .expect(200);
    expect(after.body.isDefault).to.equal(false);

    // Concurrent requests to make a default still leave exactly one.
    const many = await Promise.all(
      ['C', 'D', 'E', 'F'].map((name) => create({ name, description: '', isDefault: true })),
    );
    const final = await as(env, org.admin.token).get(org.path('/groups')).expect(200);
    const finalDefaults = final.body.items.filter((g: { isDefault: boolean }) => g.isDefault);
    expect(finalDefaults).to.have.length(1);
    expect(many.map((r) => r.status)).to.deep.equal([201, 201, 201, 201]);
  });

  it('requires every field on replace and rejects unknown fields', async () => {
    const g = await create({ name: 'G', description: '' }).expect(201);
    const res = await as(env, org.admin.token)
      .put(org.path(`/groups/${g.body.userGroupId}`), { name: 'G2' })
      .expect(400);
    expect(res.body.error.message).to.contain('description');
    await create({ name: 'H', description: '', extra: 1 }).expect(400);
    await create({ description: 'no name' }).expect(400);
  });

  it('puts a user in one group at a time and releases them when the group is deleted', async () => {
    const g1 = (await create({ name: 'One', description: '' }).expect(201)).body.userGroupId;
    const g2 = (await create({ name: 'Two', description: '' }).expect(201)).body.userGroupId;
    const m1 = await as(env, org.admin.token)
      .post(org.path(`/groups/${g1}/users`), { userId: org.chat.userId })
      .expect(200);
    expect(m1.body).to.include({
      userGroupId: g1,
      userId: org.chat.userId,
      organizationId: org.organizationId,
    });
    await as(env, org.admin.token)
      .post(org.path(`/groups/${g2}/users`), { userId: org.chat.userId })
      .expect(200);
    const member = await as(env, org.admin.token)
      .get(org.path(`/users/${org.chat.userId}`))
      .expect(200);
    expect(member.body.userGroupId).to.equal(g2);

    await as(env, org.admin.token)
      .delete(org.path(`/groups/${g2}`))
      .expect(200);
    const released = await as(env, org.admin.token)
      .get(org.path(`/users/${org.chat.userId}`))
      .expect(200);
    expect(released.body.userGroupId).to.equal(null);

    await as(env, org.admin.token)
      .post(org.path(`/groups/${g1}/users`), { userId: 'usr_nobody' })
      .expect(invalidReference('userId'));
    await as(env, org.admin.token)
      .post(org.path('/groups/grp_nope/users'), { userId: org.chat.userId })
      .expect(404);
  });

  it('is admin-only and invisible to other organizations', async () => {
    const g = (await create({ name: 'Private', description: '' }).expect(201)).body.userGroupId;
    await as(env, org.chat.token).get(org.path('/groups')).expect(403);
    await create({ name: 'X', description: '' }, org.chat.token).expect(403);

    const other = await createTestOrg(env, 'Other Groups Org');
    await as(env, other.owner.token)
      .get(other.path(`/groups/${g}`))
      .expect(404);
    await as(env, other.owner.token)
      .put(other.path(`/groups/${g}`), { name: 'Mine', description: '', isDefault: true, fullAccess: true })
      .expect(404);
    await as(env, other.owner.token)
      .delete(other.path(`/groups/${g}`))
      .expect(404);
    await as(env, other.owner.token)
      .post(other.path(`/groups/${g}/users`), { userId: other.chat.userId })
      .expect(404);
    // Putting another organization's member in a group of ours: the same answer as a user that does not exist.
    await as(env, org.owner.token)
      .post(org.path(`/groups/${g}/users`), { userId: other.chat.userId })
      .expect(invalidReference('userId'));
    const list = await as(env, other.owner.token).get(other.path('/groups')).expect(200);
    expect(list.body.totalRows).to.equal(0);
    const mine = await as(env, org.owner.token)
      .get(org.path(`/groups/${g}`))
      .expect(200);
    expect(mine.body.name).to.equal('Private');
  });
});
