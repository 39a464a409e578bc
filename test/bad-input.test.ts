import { expect } from 'chai';
import { testEnv, type TestEnv } from './helpers/env';
import { as, createTestOrg, type TestOrg } from './helpers/org';

// Inputs a fuzzer found answered with 500: each must be a 4xx with the error body, and change nothing.
describe('bad input is a 4xx, never a 500', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Fuzz Org');
  });

  const expectError = (res: { status: number; body: { error?: { code?: string; message?: string } } }) => {
    expect(res.status).to.equal(400);
    expect(res.body.error?.code).to.be.a('string').and.not.equal('internal_error');
    return res.body.error!.message!;
  };

  it('refuses a NUL character in a search', async () => {
    for (const path of ['/users', '/groups', '/agents', '/conversations']) {
      const res = await as(env, org.owner.token).get(org.path(`${path}?q=a%00b`));
      expect(expectError(res), path).to.contain('NUL');
    }
  });

  it('refuses address keys the store cannot hold, and keeps the stored address', async () => {
    await as(env, org.owner.token)
      .put(org.path(), { tradingAddress: { line1: '1 Main St' } })
      .expect(200);
    for (const key of ['$where', 'a.b', '', 'x'.repeat(65)]) {
      expectError(await as(env, org.owner.token).put(org.path(), { tradingAddress: { [key]: 'x' } }));
      expectError(await as(env, org.owner.token).put(org.path(), { legalAddress: { [key]: 'x' } }));
    }
    const org1 = await as(env, org.owner.token).get(org.path()).expect(200);
    expect(org1.body.tradingAddress).to.deep.equal({ line1: '1 Main St' });
  });

  it('refuses a cursor or offset beyond the documented maximum', async () => {
    for (const path of ['/users?cursor=1e29', '/api-keys?cursor=10000000000', '/tables?offset=1e29']) {
      expectError(await as(env, org.owner.token).get(org.path(path)));
    }
    const page = await as(env, org.owner.token).get(org.path('/users?cursor=1000000000')).expect(200);
    expect(page.body).to.deep.include({ items: [], offset: 1000000000 });
  });
});
