import { expect } from 'chai';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { createTable, idsOf, insertRow, listRows } from '@test/helpers/tables-fixtures';

describe('Custom tables: rows', () => {
  it('inserts a row: returns it with a generated id, defaults applied and unset fields null', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const row = await insertRow(env, org, 'listings', {
      title: 'Flat',
      price: 12.5,
      listed_at: '2024-05-01 09:30:00+10:00',
      extras: { z: 1, a: { c: [true, null], b: 'x' } },
    });
    expect(row).to.deep.equal({
      id: 1,
      title: 'Flat',
      price: 12.5,
      sold: false,
      listed_at: '2024-04-30T23:30:00.000Z',
      extras: { a: { b: 'x', c: [true, null] }, z: 1 },
    });
    const bare = await insertRow(env, org, 'listings', { title: 'Bare' });
    expect(bare).to.deep.equal({
      id: 2,
      title: 'Bare',
      price: null,
      sold: false,
      listed_at: null,
      extras: null,
    });
    const explicit = await insertRow(env, org, 'listings', {
      title: 'Null',
      price: null,
      sold: true,
      extras: [1, 'two'],
    });
    expect(explicit).to.include({ id: 3, price: null, sold: true });
    expect(explicit.extras).to.deep.equal([1, 'two']);
    const page = await listRows(env, org, 'listings').expect(200);
    expect(page.body).to.deep.equal({ items: [row, bare, explicit], totalRows: 3, offset: 0 });
  });

  it('accepts any JSON value in jsonb, including keys that look like operators, and returns it unchanged', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const extras = { $where: 'x', 'a.b': { $gt: 1 }, list: [{ $in: [] }] };
    const row = await insertRow(env, org, 'listings', { title: 'odd keys', extras });
    expect(row.extras).to.deep.equal(extras);
    for (const value of ['text', 42, false]) {
      const r = await insertRow(env, org, 'listings', { title: 'scalar', extras: value });
      expect(r.extras).to.equal(value);
    }
  });

  it('refuses unknown keys, a supplied id, wrong types and missing required fields, naming the field', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const admin = as(env, org.admin.token);
    const cases: Array<[object, string]> = [
      [{ title: 'a', colour: 'red' }, "'colour' is not a field"],
      [{ title: 'a', id: 7 }, "'id' must not be supplied"],
      [{ price: 1 }, "'title' is required"],
      [{ title: null }, "'title' is required and cannot be null"],
      [{ title: 5 }, "'title' must be a string"],
      [{ title: 'a', price: '12' }, "'price' must be a number"],
      [{ title: 'a', sold: 'yes' }, "'sold' must be true or false"],
      [{ title: 'a', sold: 1 }, "'sold' must be true or false"],
      [{ title: 'a', listed_at: 'yesterday' }, "'listed_at' must be an ISO 8601 timestamp"],
      [{ title: 'a', listed_at: '2024-02-30T10:00:00Z' }, "'listed_at' must be an ISO 8601 timestamp"],
      [{ title: 'a', listed_at: 1714550000000 }, "'listed_at' must be an ISO 8601 timestamp"],
    ];
    for (const [data, message] of cases) {
      const res = await admin.post(org.path('/tables/listings/data'), { data });
      expect(res.status, JSON.stringify(data)).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.message).to.contain(message);
    }
    const several = await admin
      .post(org.path('/tables/listings/data'), { data: { id: 1, price: 'x' } })
      .expect(400);
    expect(several.body.error.details.map((d: { field: string }) => d.field)).to.have.members([
      'id',
      'price',
      'title',
    ]);
    const body = await admin.post(org.path('/tables/listings/data'), { data: [1, 2] }).expect(400);
    expect(body.body.error.code).to.equal('validation_failed');
    expect(await idsOf(env, org, 'listings')).to.deep.equal([]);
  });

  it('updates only the given fields, with the same key and type rules', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const row = await insertRow(env, org, 'listings', { title: 'Flat', price: 10, extras: { a: 1 } });
    const admin = as(env, org.admin.token);
    const url = org.path(`/tables/listings/data/${row.id}`);
    const res = await admin
      .put(url, { data: { price: 11, sold: true, listed_at: '2024-01-02' } })
      .expect(200);
    expect(res.body).to.deep.equal({ ...row, price: 11, sold: true, listed_at: '2024-01-02T00:00:00.000Z' });
    const cleared = await admin.put(url, { data: { price: null, extras: { b: 2 } } }).expect(200);
    expect(cleared.body).to.include({ price: null, title: 'Flat' });
    expect(cleared.body.extras).to.deep.equal({ b: 2 });
    const refusals: Array<[object, string]> = [
      [{ id: 9 }, "'id' must not be supplied"],
      [{ nope: 1 }, "'nope' is not a field"],
      [{ price: 'dear' }, "'price' must be a number"],
      [{ title: null }, "'title' is required and cannot be null"],
      // the contract's minProperties, in the validator's words
      [{}, 'data must NOT have fewer than 1 properties'],
    ];
    for (const [data, message] of refusals) {
      const bad = await admin.put(url, { data });
      expect(bad.status, JSON.stringify(data)).to.equal(400);
      expect(bad.body.error.message).to.contain(message);
    }
    await admin.put(org.path('/tables/listings/data/999'), { data: { price: 1 } }).expect(404);
    await admin.put(org.path('/tables/listings/data/abc'), { data: { price: 1 } }).expect(400);
    const stored = await listRows(env, org, 'listings').expect(200);
    expect(stored.body.items).to.deep.equal([cleared.body]);
  });

  it('deletes a row and never hands its id out again, even when it was the newest', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const a = await insertRow(env, org, 'listings', { title: 'a' });
    const b = await insertRow(env, org, 'listings', { title: 'b' });
    const admin = as(env, org.admin.token);
    const del = await admin.delete(org.path(`/tables/listings/data/${b.id}`)).expect(200);
    expect(del.body).to.deep.equal({ organizationId: org.organizationId, tableName: 'listings', id: b.id });
    await admin.delete(org.path(`/tables/listings/data/${b.id}`)).expect(404);
    const c = await insertRow(env, org, 'listings', { title: 'c' });
    expect([a.id, b.id, c.id]).to.deep.equal([1, 2, 3]);
    expect(await idsOf(env, org, 'listings')).to.deep.equal([1, 3]);
  });

  it('pages with limit (default 20, at most 1000) and offset', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const data = Array.from({ length: 25 }, (_, i) => ({ title: `row ${i}` }));
    await as(env, org.admin.token).post(org.path('/tables/listings/data/batch'), { data }).expect(200);
    const first = await listRows(env, org, 'listings').expect(200);
    expect(first.body.items).to.have.length(20);
    expect(first.body).to.include({ totalRows: 25, offset: 0 });
    const second = await listRows(env, org, 'listings', { offset: 20 }).expect(200);
    expect(second.body.items.map((r: { id: number }) => r.id)).to.deep.equal([21, 22, 23, 24, 25]);
    expect(second.body).to.include({ totalRows: 25, offset: 20 });
    const beyond = await listRows(env, org, 'listings', { offset: 100 }).expect(200);
    expect(beyond.body).to.deep.equal({ items: [], totalRows: 25, offset: 100 });
    await listRows(env, org, 'listings', { limit: 1001 }).expect(400);
    await listRows(env, org, 'listings', { limit: 0 }).expect(400);
    await listRows(env, org, 'listings', { offset: -1 }).expect(400);
    await listRows(env, org, 'listings', { cursor: 1 }).expect(400);
  });
});
