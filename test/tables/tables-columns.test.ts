import { expect } from 'chai';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { createTable, idsOf, insertRow, listRows, queryError } from '@test/helpers/tables-fixtures';

describe('Custom tables: columns', () => {
  it('renames a column and moves its data: rows, filters, orderBy and writes use the new name at once', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const a = await insertRow(env, org, 'listings', { title: 'a', price: 5 });
    const b = await insertRow(env, org, 'listings', { title: 'b', price: 50 });
    const admin = as(env, org.admin.token);
    const res = await admin
      .put(org.path('/tables/listings/columns/price'), { newName: 'asking_price' })
      .expect(200);
    expect(res.body.fields.map((f: { name: string }) => f.name)).to.deep.equal([
      'title',
      'asking_price',
      'sold',
      'listed_at',
      'extras',
    ]);
    expect(res.body.fields[1]).to.include({ type: 'numeric', required: false, comments: 'Price' });
    const rows = await listRows(env, org, 'listings').expect(200);
    expect(rows.body.items).to.deep.equal([
      { id: a.id, title: 'a', asking_price: 5, sold: false, listed_at: null, extras: null },
      { id: b.id, title: 'b', asking_price: 50, sold: false, listed_at: null, extras: null },
    ]);
    expect(await idsOf(env, org, 'listings', { filters: 'asking_price:gt:10:and' })).to.deep.equal([b.id]);
    expect(await idsOf(env, org, 'listings', { orderBy: 'asking_price:desc' })).to.deep.equal([b.id, a.id]);
    expect(await queryError(env, org, 'listings', { filters: 'price:gt:10:and' })).to.contain(
      "unknown field 'price'",
    );
    expect(await queryError(env, org, 'listings', { orderBy: 'price' })).to.contain("unknown field 'price'");
    await admin.post(org.path('/tables/listings/data'), { data: { title: 'c', price: 1 } }).expect(400);
    const c = await insertRow(env, org, 'listings', { title: 'c', asking_price: 7 });
    expect(c.asking_price).to.equal(7);
    const updated = await admin
      .put(org.path(`/tables/listings/data/${a.id}`), { data: { asking_price: 6 } })
      .expect(200);
    expect(updated.body.asking_price).to.equal(6);
    const got = await as(env, org.chat.token).get(org.path('/tables/listings')).expect(200);
    expect(got.body.fields[1].name).to.equal('asking_price');
  });

  it('renames timestamp and jsonb columns too, keeping their values', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const row = await insertRow(env, org, 'listings', {
      title: 'a',
      listed_at: '2024-01-01T00:00:00Z',
      extras: { k: [1] },
    });
    const admin = as(env, org.admin.token);
    await admin.put(org.path('/tables/listings/columns/listed_at'), { newName: 'ListedOn' }).expect(200);
    await admin.put(org.path('/tables/listings/columns/extras'), { newName: 'meta' }).expect(200);
    const rows = await listRows(env, org, 'listings').expect(200);
    expect(rows.body.items).to.deep.equal([
      {
        id: row.id,
        title: 'a',
        price: null,
        sold: false,
        ListedOn: '2024-01-01T00:00:00.000Z',
        meta: { k: [1] },
      },
    ]);
    expect(
      await idsOf(env, org, 'listings', { filters: 'ListedOn:gte:2024-01-01:and|||meta:like:k:and' }),
    ).to.deep.equal([row.id]);
  });

  it('swaps column names through a third name without mixing up their values', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const row = await insertRow(env, org, 'listings', { title: 'house', price: 900 });
    const admin = as(env, org.admin.token);
    await admin.put(org.path('/tables/listings/columns/title'), { newName: 'tmp' }).expect(200);
    await admin.put(org.path('/tables/listings/columns/price'), { newName: 'tmp' }).expect(409);
    await admin.put(org.path('/tables/listings/columns/tmp'), { newName: 'label' }).expect(200);
    await admin.put(org.path('/tables/listings/columns/price'), { newName: 'title' }).expect(200);
    const rows = await listRows(env, org, 'listings').expect(200);
    expect(rows.body.items[0]).to.include({ id: row.id, label: 'house', title: 900 });
    expect(
      await idsOf(env, org, 'listings', { filters: 'title:eq:900:and|||label:eq:house:and' }),
    ).to.deep.equal([row.id]);
  });

  it('never loses a value written while its column is renamed', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const admin = as(env, org.admin.token);
    const writes = Array.from({ length: 12 }, (_, i) =>
      admin.post(org.path('/tables/listings/data'), { data: { title: `t${i}`, price: i } }),
    );
    // Writes that do not name the renamed column must all be stored, whatever the timing (a positive control:
    // the assertions below cannot pass by refusing everything).
    const untouched = Array.from({ length: 6 }, (_, i) =>
      admin.post(org.path('/tables/listings/data'), { data: { title: `u${i}` } }),
    );
    const [rename, ...all] = await Promise.all([
      admin.put(org.path('/tables/listings/columns/price'), { newName: 'cost' }),
      ...writes,
      ...untouched,
    ]);
    const results = all.slice(0, writes.length);
    expect(rename.status).to.equal(200);
    expect(all.slice(writes.length).map((r) => r.status)).to.deep.equal(Array(untouched.length).fill(201));
    // A write is either refused (it named the old column after the rename) or stored; a stored value is
    // always visible under the new name.
    const stored = results
      .filter((r) => r.status === 201)
      .map((r) => r.body as { id: number; title: string });
    expect(results.every((r) => r.status === 201 || r.status === 400)).to.equal(true);
    const rows = await listRows(env, org, 'listings', { limit: '100' }).expect(200);
    for (const { id, title } of stored) {
      const found = rows.body.items.find((r: { id: number }) => r.id === id);
      expect(found).to.include({ title, cost: Number(title.slice(1)) });
    }
    const titles = rows.body.items.map((r: { title: string }) => r.title);
    expect(titles).to.include.members(['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
    // After the rename, the new name is written and the old one refused.
    await admin.post(org.path('/tables/listings/data'), { data: { title: 'after', cost: 7 } }).expect(201);
    await admin.post(org.path('/tables/listings/data'), { data: { title: 'old', price: 7 } }).expect(400);
  });

  it('refuses renaming to id, to a taken name or to bad characters; 404 for an unknown column', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org);
    const admin = as(env, org.admin.token);
    const toId = await admin.put(org.path('/tables/listings/columns/price'), { newName: 'id' }).expect(400);
    expect(toId.body.error.message).to.contain("'id' is reserved");
    const taken = await admin
      .put(org.path('/tables/listings/columns/price'), { newName: 'title' })
      .expect(409);
    expect(taken.body.error.code).to.equal('conflict');
    await admin.put(org.path('/tables/listings/columns/price'), { newName: 'has-dash' }).expect(400);
    await admin.put(org.path('/tables/listings/columns/price'), {}).expect(400);
    const missing = await admin
      .put(org.path('/tables/listings/columns/nope'), { newName: 'other' })
      .expect(404);
    expect(missing.body.error.code).to.equal('not_found');
    await admin.put(org.path('/tables/nope/columns/price'), { newName: 'other' }).expect(404);
    const same = await admin
      .put(org.path('/tables/listings/columns/price'), { newName: 'price' })
      .expect(200);
    expect(same.body.fields[1].name).to.equal('price');
  });

  it('links a column to the Data Dictionary only under its current, lowercase name; unlink keeps the data', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org, 'people', [
      { name: 'Email', type: 'text', required: true, comments: 'Contact' },
      { name: 'age', type: 'numeric', required: false, comments: '' },
    ]);
    const row = await insertRow(env, org, 'people', { Email: 'a@example.test', age: 30 });
    const admin = as(env, org.admin.token);
    const link = (column: string, ddFieldName: string) =>
      admin.post(org.path(`/tables/people/columns/${column}/dd-link`), { ddFieldName });

    const upper = await link('Email', 'Email').expect(400);
    expect(upper.body.error.code).to.equal('validation_failed');
    const mismatch = await link('Email', 'email').expect(400);
    expect(mismatch.body.error.message).to.contain(
      "must equal the column's current name 'Email'; rename the column first",
    );
    await link('age', 'years').expect(400);
    await admin.post(org.path('/tables/people/columns/age/dd-link'), {}).expect(400);
    await link('nope', 'nope').expect(404);

    await admin.put(org.path('/tables/people/columns/Email'), { newName: 'email' }).expect(200);
    const linked = await link('email', 'email').expect(200);
    expect(linked.body.fields[0]).to.deep.equal({
      name: 'email',
      type: 'text',
      required: true,
      comments: 'Contact',
      ddFieldName: 'email',
    });
    expect(linked.body.fields[1].ddFieldName).to.equal(null);
    await link('email', 'email').expect(200);

    const renameLinked = await admin
      .put(org.path('/tables/people/columns/email'), { newName: 'mail' })
      .expect(409);
    expect(renameLinked.body.error.message).to.contain('unlink it first');

    const unlinked = await admin.delete(org.path('/tables/people/columns/email/dd-link')).expect(200);
    expect(unlinked.body.fields[0]).to.include({ name: 'email', ddFieldName: null });
    const again = await admin.delete(org.path('/tables/people/columns/email/dd-link')).expect(200);
    expect(again.body.fields).to.deep.equal(unlinked.body.fields);
    await admin.delete(org.path('/tables/people/columns/nope/dd-link')).expect(404);
    const rows = await listRows(env, org, 'people').expect(200);
    expect(rows.body.items).to.deep.equal([{ id: row.id, email: 'a@example.test', age: 30 }]);
    const got = await as(env, org.chat.token).get(org.path('/tables/people')).expect(200);
    expect(got.body.fields[0].ddFieldName).to.equal(null);
  });
});
