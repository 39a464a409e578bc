import { expect } from 'chai';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

describe('organization settings', () => {
  let env: TestEnv;
  let org: TestOrg;

  beforeEach(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Acme');
  });

  it('is readable by every member, including chat', async () => {
    for (const token of [org.owner.token, org.admin.token, org.chat.token, org.apiKey]) {
      const res = await as(env, token).get(org.path()).expect(200);
      expect(res.body).to.include({ organizationId: org.organizationId, name: 'Acme' });
    }
  });

  it('applies direct fields at once and refuses writes from chat members', async () => {
    const address = { line1: '1 Main St', postcode: '2000' };
    const res = await as(env, org.admin.token)
      .put(org.path(), {
        tradingName: 'Acme Realty',
        phone: '+61 2 5550 1234',
        isRealEstate: true,
        legalAddress: address,
      })
      .expect(200);
    expect(res.body).to.include({ tradingName: 'Acme Realty', phone: '+61 2 5550 1234', isRealEstate: true });
    expect(res.body.legalAddress).to.deep.equal(address);
    const again = await as(env, org.chat.token).get(org.path()).expect(200);
    expect(again.body.tradingName).to.equal('Acme Realty');
    await as(env, org.chat.token).put(org.path(), { tradingName: 'Hijacked' }).expect(403);
  });

  it('sets a first abn directly but queues a change of an established name or abn until approved', async () => {
    const first = await as(env, org.owner.token).put(org.path(), { abn: '12345678901' }).expect(200);
    expect(first.body.abn).to.equal('12345678901');
    expect(first.body.pendingChanges).to.deep.equal([]);

    const queued = await as(env, org.owner.token)
      .put(org.path(), { name: 'Acme Holdings', abn: '99999999999' })
      .expect(200);
    expect(queued.body.name).to.equal('Acme');
    expect(queued.body.abn).to.equal('12345678901');
    expect(
      queued.body.pendingChanges.map((c: { field: string; value: string }) => [c.field, c.value]),
    ).to.have.deep.members([
      ['name', 'Acme Holdings'],
      ['abn', '99999999999'],
    ]);
    // A newer request for the same field replaces the older one.
    const replaced = await as(env, org.owner.token).put(org.path(), { name: 'Acme Group' }).expect(200);
    const nameChanges = replaced.body.pendingChanges.filter((c: { field: string }) => c.field === 'name');
    expect(nameChanges).to.have.length(1);
    expect(nameChanges[0]).to.include({ value: 'Acme Group', requestedByUserId: org.owner.userId });

    await env.deps.services.organization.decidePendingChange(
      org.organizationId,
      nameChanges[0].changeId,
      true,
    );
    const abnChange = replaced.body.pendingChanges.find((c: { field: string }) => c.field === 'abn');
    await env.deps.services.organization.decidePendingChange(org.organizationId, abnChange.changeId, false);
    const after = await as(env, org.chat.token).get(org.path()).expect(200);
    expect(after.body).to.include({ name: 'Acme Group', abn: '12345678901' });
    expect(after.body.pendingChanges).to.deep.equal([]);
  });

  it('keeps every queued change and every decision when they happen at the same moment', async () => {
    await as(env, org.owner.token).put(org.path(), { abn: '12345678901' }).expect(200);
    // Twenty concurrent requests, each queueing a change of one field or editing a direct field.
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        as(env, org.owner.token)
          .put(
            org.path(),
            i % 2 ? { abn: `9999999990${i % 10}` } : { name: 'Acme Holdings', phone: `+61 ${i}` },
          )
          .expect(200),
      ),
    );
    const queued = await as(env, org.owner.token).get(org.path()).expect(200);
    expect(queued.body.pendingChanges.map((c: { field: string }) => c.field)).to.have.members([
      'name',
      'abn',
    ]);
    // Both decisions at once: neither may bring the other's change back.
    await Promise.all(
      queued.body.pendingChanges.map((c: { changeId: string }) =>
        env.deps.services.organization.decidePendingChange(org.organizationId, c.changeId, true),
      ),
    );
    const after = await as(env, org.owner.token).get(org.path()).expect(200);
    expect(after.body.pendingChanges).to.deep.equal([]);
    expect(after.body.name).to.equal('Acme Holdings');
    expect(after.body.abn).to.match(/^9999999990\d$/);
  });

  it('does not queue anything when the name is unchanged', async () => {
    const res = await as(env, org.owner.token).put(org.path(), { name: 'Acme' }).expect(200);
    expect(res.body.pendingChanges).to.deep.equal([]);
  });

  it('hides subscription details from non-owners when billing visibility is owners-only', async () => {
    const visible = await as(env, org.chat.token).get(org.path()).expect(200);
    expect(visible.body.subscription).to.deep.equal({ plan: 'free', status: 'active' });
    await as(env, org.admin.token).put(org.path(), { billingVisibility: 'owners' }).expect(403);
    await as(env, org.owner.token).put(org.path(), { billingVisibility: 'owners' }).expect(200);
    for (const token of [org.admin.token, org.chat.token]) {
      const res = await as(env, token).get(org.path()).expect(200);
      expect(res.body).to.not.have.property('subscription');
    }
    const owner = await as(env, org.owner.token).get(org.path()).expect(200);
    expect(owner.body.subscription.plan).to.equal('free');
  });

  it('rejects unknown fields, wrong types and empty updates with 400', async () => {
    for (const body of [{ bankAccount: '123' }, { isRealEstate: 'yes' }, {}, { email: 'not an email' }]) {
      const res = await as(env, org.owner.token).put(org.path(), body).expect(400);
      expect(res.body.error.code).to.equal('validation_failed');
    }
  });

  it('cannot be read or changed with credentials of another organization', async () => {
    const other = await createTestOrg(env, 'Other');
    await as(env, other.owner.token).put(org.path(), { tradingName: 'X' }).expect(401);
    const res = await as(env, org.owner.token).get(org.path()).expect(200);
    expect(res.body.tradingName).to.equal(null);
  });
});
