import { expect } from 'chai';
import { TablesService } from '@lib/tables/tables.service';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

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
    // openapi.yaml's pattern states it, so the validator refuses it, naming the parameter and the rule
    for (const path of ['/users', '/groups', '/agents', '/conversations', '/artifacts', '/knowledgebases']) {
      const res = await as(env, org.owner.token).get(org.path(`${path}?q=a%00b`));
      expect(expectError(res), path).to.contain('q must match pattern "^[^\\u0000]*$"');
    }
  });

  it('reads a + in a query as the space it stands for (as URLSearchParams and HTML forms send it)', async () => {
    const query = new URLSearchParams({ actionChainId: 'no such chain' }).toString();
    expect(query).to.equal('actionChainId=no+such+chain');
    const found = await as(env, org.owner.token)
      .get(org.path(`/schedules?${query}`))
      .expect(200);
    expect(found.body.items).to.deep.equal([]);
    // Other reserved characters still have to be percent-encoded.
    const raw = await as(env, org.owner.token).get(org.path('/schedules?actionChainId=a:b'));
    expect(expectError(raw)).to.contain("Parameter 'actionChainId' must be url encoded");
  });

  it('refuses an empty search or filter, as the contract says (minLength 1)', async () => {
    const paths = ['/users', '/groups', '/agents', '/conversations', '/artifacts', '/knowledgebases'];
    for (const path of [...paths.map((p) => `${p}?q=`), '/tables/t/data?filters=']) {
      expect(expectError(await as(env, org.owner.token).get(org.path(path))), path).to.contain('Empty value');
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

  it('refuses a body nested deeper than 32 levels, and stores one nested 30 deep', async () => {
    await as(env, org.owner.token)
      .post(org.path('/tables'), {
        name: 'deep',
        fields: [{ name: 'doc', type: 'jsonb', required: true, comments: 'any JSON' }],
      })
      .expect(201);
    const nest = (levels: number) => {
      let value: unknown = 'leaf';
      for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
      return value;
    };
    const post = (levels: number) =>
      as(env, org.owner.token).post(org.path('/tables/deep/data'), { data: { doc: nest(levels) } });
    expect(expectError(await post(33))).to.contain('deeper than 32');
    // Far deeper than any recursion could take, sent as text (no client could build it as an object).
    const text = `{"data":{"doc":${'['.repeat(200_000)}${']'.repeat(200_000)}}}`;
    expectError(
      await as(env, org.owner.token)
        .post(org.path('/tables/deep/data'))
        .set('content-type', 'application/json')
        .send(text),
    );
    await as(env, org.owner.token)
      .post(org.path('/tables/deep/data'), { data: { doc: nest(30) } })
      .expect(201);
  });

  it('stops a row query that runs past its time limit with a 400', async () => {
    await as(env, org.owner.token)
      .post(org.path('/tables'), {
        name: 'big',
        fields: [{ name: 'title', type: 'text', required: true, comments: 'words' }],
      })
      .expect(201);
    for (let batch = 0; batch < 10; batch++) {
      const data = Array.from({ length: 1000 }, (_, i) => ({ title: `row ${batch}-${i} with some words` }));
      await as(env, org.owner.token).post(org.path('/tables/big/data/batch'), { data }).expect(200);
    }
    const caller = { organizationId: org.organizationId, userId: org.owner.userId };
    const query = { filters: 'title:ilike:no such words:and', limit: 20, offset: 0 };
    // The production limit (TABLE_QUERY_TIMEOUT_MS, 5 s) answers; a 1 ms limit cannot scan 10,000 rows.
    expect((await env.deps.services.tables.listRows(caller, 'big', query)).totalRows).to.equal(0);
    const strict = new TablesService(env.deps.repos, 1);
    const err = await strict.listRows(caller, 'big', query).then(
      () => expect.fail('a 1 ms query over 10,000 rows finished'),
      (e: unknown) => e,
    );
    expect(err).to.include({ status: 400, code: 'query_timeout' });
  });

  it('answers the longest query the contract allows, in any script, with the error body (not a bare 431)', async () => {
    await as(env, org.owner.token)
      .post(org.path('/tables'), {
        name: 'wide',
        fields: [{ name: 'title', type: 'text', required: true, comments: 'words' }],
      })
      .expect(201);
    const { url } = await env.listen();
    const query = new URLSearchParams({ filters: '😀'.repeat(4000), orderBy: '😀'.repeat(2000) });
    const res = await fetch(`${url}${org.path('/tables/wide/data')}?${query.toString()}`, {
      headers: { Authorization: `Bearer ${org.owner.token}` },
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('validation_failed');
  });

  it('refuses a cursor or offset beyond the documented maximum', async () => {
    for (const path of ['/users?cursor=1e29', '/api-keys?cursor=10000000000', '/tables?offset=1e29']) {
      expectError(await as(env, org.owner.token).get(org.path(path)));
    }
    const page = await as(env, org.owner.token).get(org.path('/users?cursor=1000000000')).expect(200);
    expect(page.body).to.deep.include({ items: [], offset: 1000000000 });
  });

  it('answers odd artifact input with a 4xx, and keeps odd but valid text as it was sent', async () => {
    const nul = await as(env, org.owner.token)
      .post(org.path('/artifacts'), { name: 'a\u0000b', contentType: 'text/plain', content: 'x\u0000y' })
      .expect(201);
    const id = nul.body.artifact.artifactId as string;
    expect(nul.body.artifact.name).to.equal('a\u0000b');
    for (const [method, path, body] of [
      ['get', '/artifacts?contentType=a%00b', undefined],
      ['get', '/artifacts?conversationId=%00', undefined],
      ['get', `/artifacts/${id}/app-manifest?versionId=%00`, undefined],
      ['post', `/artifacts/${id}/download-link`, { versionId: '$where' }],
      ['put', `/artifacts/${id}/share`, { userIds: ['$gt'], groupIds: ['a.b'] }],
      ['post', '/artifacts/pins/reorder', { orderedArtifactIds: ['$ne', '', 'x'] }],
      ['post', '/artifacts', { name: 'x', contentType: 'text/plain; charset', content: 'x' }],
      ['post', `/artifacts/${id}/versions`, { contentType: 'text/plain', contentBase64: '====' }],
      ['post', `/artifacts/${id}/send-to-knowledge-base`, { knowledgeBaseId: '\u0000' }],
    ] as const) {
      const res = await (body === undefined
        ? as(env, org.owner.token)[method](org.path(path))
        : as(env, org.owner.token)[method as 'post'](org.path(path), body));
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.within(200, 499);
      if (res.status >= 400) expect(res.body.error?.code).to.be.a('string').and.not.equal('internal_error');
    }
  });
});
