import { expect } from 'chai';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { createTable, idsOf, insertBatch, insertRow, listRows } from '@test/helpers/tables-fixtures';

describe('Custom tables: batch insert and row ids', () => {
  it('inserts the valid rows, skips and reports the invalid ones by index, ids in input order', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    await insertRow(env, org, 'listings', { title: 'first' });
    const result = await insertBatch(env, org, 'listings', [
      { title: 'a', price: 1 },
      { title: 'b', price: 'two' },
      { price: 3 },
      { title: 'd', listed_at: '2024-06-01T08:00:00Z' },
      { title: 'e', id: 99 },
      42,
      null,
      ['f'],
      { title: 'g', colour: 'red' },
      { title: 'h', sold: true },
    ]);
    expect(result).to.deep.include({ inserted: 3, failed: 7, ids: [2, 3, 4] });
    expect(result.errors.map((e) => e.index)).to.deep.equal([1, 2, 4, 5, 6, 7, 8]);
    const byIndex = new Map(result.errors.map((e) => [e.index, e.error]));
    expect(byIndex.get(1)).to.contain("'price' must be a number");
    expect(byIndex.get(2)).to.contain("'title' is required");
    expect(byIndex.get(4)).to.contain("'id' must not be supplied");
    expect(byIndex.get(5)).to.contain('a row must be a JSON object');
    expect(byIndex.get(6)).to.contain('a row must be a JSON object');
    expect(byIndex.get(7)).to.contain('a row must be a JSON object');
    expect(byIndex.get(8)).to.contain("'colour' is not a field");
    const page = await listRows(env, org, 'listings').expect(200);
    expect(page.body.items.map((r: { id: number; title: string }) => [r.id, r.title])).to.deep.equal([
      [1, 'first'],
      [2, 'a'],
      [3, 'd'],
      [4, 'h'],
    ]);
    expect(page.body.items[2].listed_at).to.equal('2024-06-01T08:00:00.000Z');
    expect(page.body.items[1].sold).to.equal(false);
  });

  it('reports a batch with no valid row, or no rows, without inserting anything', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const none = await insertBatch(env, org, 'listings', [{ nope: 1 }, {}]);
    expect(none).to.deep.equal({
      inserted: 0,
      failed: 2,
      errors: [
        { index: 0, error: "'nope' is not a field of this table; 'title' is required" },
        { index: 1, error: "'title' is required" },
      ],
      ids: [],
    });
    expect(await insertBatch(env, org, 'listings', [])).to.deep.equal({
      inserted: 0,
      failed: 0,
      errors: [],
      ids: [],
    });
    expect((await insertRow(env, org, 'listings', { title: 'x' })).id).to.equal(1);
  });

  it('takes 1000 rows in a body above the app-wide 1 MB limit, refuses 1001 rows (400) and bodies over 8 MB (413)', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const admin = as(env, org.admin.token);
    const big = 'x'.repeat(2000);
    const full = Array.from({ length: 1000 }, (_, i) => ({ title: `${i}`, extras: { note: big } }));
    const ok = await admin.post(org.path('/tables/listings/data/batch'), { data: full }).expect(200);
    expect(ok.body.inserted).to.equal(1000);
    expect(ok.body.ids[999]).to.equal(1000);
    const tooMany = await admin
      .post(org.path('/tables/listings/data/batch'), {
        data: Array.from({ length: 1001 }, () => ({ title: 't' })),
      })
      .expect(400);
    expect(tooMany.body.error.code).to.equal('validation_failed');
    expect(tooMany.body.error.message).to.contain('1000');
    const huge = Array.from({ length: 500 }, () => ({ title: 'y'.repeat(17_000) }));
    const tooBig = await admin.post(org.path('/tables/listings/data/batch'), { data: huge }).expect(413);
    expect(tooBig.body.error.code).to.equal('payload_too_large');
    expect(tooBig.body.error.message).to.contain('8mb');
    // A single insert keeps the app-wide limit.
    const single = await admin.post(org.path('/tables/listings/data'), {
      data: { title: 'z'.repeat(1_100_000) },
    });
    expect(single.status).to.equal(413);
    const count = await listRows(env, org, 'listings', { limit: 1 }).expect(200);
    expect(count.body.totalRows).to.equal(1000);
  });

  it('gives concurrent inserts and batches unique ids, each batch a consecutive increasing run', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const admin = as(env, org.admin.token);
    const singles = Array.from({ length: 20 }, (_, i) =>
      admin.post(org.path('/tables/listings/data'), { data: { title: `s${i}` } }),
    );
    const batches = [0, 1].map((b) =>
      admin.post(org.path('/tables/listings/data/batch'), {
        data: Array.from({ length: 15 }, (_, i) => ({ title: `b${b}-${i}` })),
      }),
    );
    const [singleRes, batchRes] = await Promise.all([Promise.all(singles), Promise.all(batches)]);
    const singleIds = singleRes.map((r) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return r.body.id as number;
    });
    const batchIds = batchRes.map((r) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.body.ids as number[];
    });
    for (const ids of batchIds) {
      expect(ids).to.have.length(15);
      ids.forEach((id, i) => expect(id).to.equal(ids[0]! + i));
    }
    const all = [...singleIds, ...batchIds.flat()];
    expect(new Set(all).size).to.equal(50);
    expect(all.every((id) => Number.isInteger(id) && id >= 1)).to.be.true;
    const stored = await idsOf(env, org, 'listings');
    expect(stored).to.have.members(all);
    // Every title landed under the id it was reported with.
    const rows = await listRows(env, org, 'listings', { limit: 100 }).expect(200);
    const titleOf = new Map(rows.body.items.map((r: { id: number; title: string }) => [r.id, r.title]));
    singleIds.forEach((id, i) => expect(titleOf.get(id)).to.equal(`s${i}`));
    // Later inserts get larger ids than anything before them.
    const next = await insertRow(env, org, 'listings', { title: 'after' });
    expect(next.id).to.be.greaterThan(Math.max(...all));
    const nextBatch = await insertBatch(env, org, 'listings', [{ title: 'after-1' }, { title: 'after-2' }]);
    expect(nextBatch.ids).to.deep.equal([next.id + 1, next.id + 2]);
  });
});
