import { expect } from 'chai';
import request from 'supertest';
import { TablesService } from '@lib/tables/tables.service';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';

/** A value nested `levels` deep (objects and arrays in turn). */
function nest(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

const wide = (keys: number) => Object.fromEntries(Array.from({ length: keys }, (_, i) => [`k${i}`, i]));

// Deep and wide JSON where it is kept and used again later: webhook bodies, chain inputs, table rows.
describe('deep and wide JSON is bounded where it is kept', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Deep JSON Org');
  });
  after(() => closeTestEnv());

  it('refuses a webhook delivery or a chain input nested deeper than 32 levels', async () => {
    const webhook = await as(env, org.owner.token).post(org.path('/webhooks'), { name: 'Deep' }).expect(201);
    const execute = org.path(`/webhooks/${webhook.body.webhookId as string}/execute`);
    for (const body of [{ doc: nest(33) }, [nest(32)]]) {
      const res = await request(env.app).post(execute).send(body).expect(400);
      expect(res.body.error.message).to.equal('the request body nests deeper than 32 levels');
    }
    const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    await request(env.app).post(execute).set('content-type', 'application/json').send(text).expect(400);
    // Nothing of them was accepted as a delivery.
    const deliveries = await as(env, org.owner.token)
      .get(org.path(`/webhooks/${webhook.body.webhookId as string}/deliveries`))
      .expect(200);
    expect(deliveries.body.totalRows).to.equal(0);

    const chain = await as(env, org.owner.token)
      .post(org.path('/chains'), {
        name: 'Deep input',
        description: 'x',
        llmInstructions: 'x',
        steps: [{ stepOrder: 1, instructions: 'x' }],
      })
      .expect(201);
    const run = await as(env, org.chat.token)
      .post(org.path(`/chains/${chain.body.actionChainId as string}/run`), { payload: { doc: nest(32) } })
      .expect(400);
    expect(run.body.error.message).to.equal('the request body nests deeper than 32 levels');
  });

  it('stores, reads and filters rows with deep and wide jsonb values', async () => {
    await as(env, org.owner.token)
      .post(org.path('/tables'), {
        name: 'docs',
        fields: [
          { name: 'title', type: 'text', required: true, comments: 'a name' },
          { name: 'doc', type: 'jsonb', required: false, comments: 'any JSON' },
        ],
      })
      .expect(201);
    const deep = nest(29);
    const broad = wide(40_000);
    await as(env, org.owner.token)
      .post(org.path('/tables/docs/data/batch'), {
        data: [
          { title: 'deep', doc: deep },
          { title: 'wide', doc: broad },
        ],
      })
      .expect(200);
    const page = await as(env, org.owner.token)
      .get(org.path('/tables/docs/data?filters=title:eq:wide:and'))
      .expect(200);
    expect(page.body.items).to.have.length(1);
    expect(page.body.items[0].doc).to.deep.equal(broad);
    const all = await as(env, org.owner.token).get(org.path('/tables/docs/data?orderBy=title')).expect(200);
    expect(all.body.items.map((r: { doc: unknown }) => r.doc)).to.deep.equal([deep, broad]);
  });

  it('refuses a page of rows holding more than TABLE_PAGE_MAX_BYTES, and answers a smaller one', async () => {
    await as(env, org.owner.token)
      .post(org.path('/tables'), {
        name: 'big_rows',
        fields: [{ name: 'doc', type: 'jsonb', required: true, comments: 'any JSON' }],
      })
      .expect(201);
    const row = { doc: { text: 'z'.repeat(30_000) } };
    await as(env, org.owner.token)
      .post(org.path('/tables/big_rows/data/batch'), { data: [row, row, row, row, row] })
      .expect(200);
    const caller = { organizationId: org.organizationId, userId: org.owner.userId };
    // The production budget (32 MB) answers; one of 100 KB holds three rows of 30 KB, not five.
    expect(env.config.tablePageMaxBytes).to.equal(32 * 1024 * 1024);
    const page = (limit: number) => ({ limit, offset: 0 });
    expect((await env.deps.services.tables.listRows(caller, 'big_rows', page(5))).items).to.have.length(5);
    const strict = new TablesService(env.deps.repos, 5000, 100_000);
    expect((await strict.listRows(caller, 'big_rows', page(3))).items).to.have.length(3);
    const err = await strict.listRows(caller, 'big_rows', page(5)).then(
      () => expect.fail('a page over its byte budget was answered'),
      (e: unknown) => e,
    );
    expect(err).to.include({ status: 400, code: 'page_too_large' });
    expect((err as Error).message).to.contain('TABLE_PAGE_MAX_BYTES');
  });

  it('refuses step schemas holding more than CHAIN_SCHEMA_MAX_NODES objects and arrays together', async () => {
    const max = env.config.chains.schemaMaxNodes;
    expect(max).to.equal(2000);
    // A schema of exactly `nodes` objects: itself, its properties map, then fields of up to 40 string fields each
    // (a field object, its properties map, one node per inner field), as openapi.yaml allows 50 per map.
    const field = (inner: number) =>
      inner < 1
        ? { type: 'string' }
        : {
            type: 'object',
            properties: Object.fromEntries(
              Array.from({ length: inner }, (_, i) => [`q${i}`, { type: 'string' }]),
            ),
          };
    const schema = (nodes: number) => {
      const properties: Record<string, object> = {};
      for (let left = nodes - 2, i = 0; left > 0; i++) {
        const inner = Math.min(40, left - 2);
        properties[`p${i}`] = field(inner);
        left -= inner < 1 ? 1 : inner + 2;
      }
      return { type: 'object', properties };
    };
    const chain = (steps: object[]) =>
      as(env, org.owner.token).post(org.path('/chains'), {
        name: 'Schemas',
        description: 'x',
        llmInstructions: 'x',
        steps,
      });
    const half = max / 2;
    const fits = [
      { stepOrder: 1, inputSchema: schema(half) },
      { stepOrder: 2, outputSchema: schema(half) },
    ];
    const created = await chain(fits).expect(201);
    const over = await chain([...fits, { stepOrder: 3, outputSchema: schema(3) }]).expect(400);
    expect(over.body.error.message).to.contain(
      `more than ${max} objects and arrays together (CHAIN_SCHEMA_MAX_NODES)`,
    );
    const steps = org.path(`/chains/${created.body.actionChainId as string}/steps`);
    const one = await as(env, org.owner.token)
      .post(steps, { stepOrder: 3, outputSchema: schema(5) })
      .expect(201);
    const wideStep = await as(env, org.owner.token)
      .put(`${steps}/${one.body.stepId as string}`, { stepOrder: 3, outputSchema: schema(max + 1) })
      .expect(400);
    expect(wideStep.body.error.message).to.contain('CHAIN_SCHEMA_MAX_NODES');
  });
});
