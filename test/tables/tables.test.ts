import { expect } from 'chai';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { createTable, insertRow, LISTING_FIELDS } from '@test/helpers/tables-fixtures';

describe('Custom tables: definitions', () => {
  it('creates a table and returns it with every field as defined', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    const res = await as(env, org.admin.token).post(org.path('/tables'), {
      name: 'listings',
      description: 'Properties',
      fields: LISTING_FIELDS,
    });
    expect(res.status).to.equal(201);
    expect(res.body).to.include({
      name: 'listings',
      organizationId: org.organizationId,
      description: 'Properties',
    });
    expect(res.body.creatorUserId).to.equal(org.admin.userId);
    expect(res.body.fields).to.deep.equal([
      { name: 'title', type: 'text', required: true, comments: 'Title', ddFieldName: null },
      { name: 'price', type: 'numeric', required: false, comments: 'Price', ddFieldName: null },
      {
        name: 'sold',
        type: 'boolean',
        required: false,
        default: false,
        comments: 'Sold yet',
        ddFieldName: null,
      },
      { name: 'listed_at', type: 'timestamp', required: false, comments: 'Listed at', ddFieldName: null },
      { name: 'extras', type: 'jsonb', required: false, comments: 'Anything else', ddFieldName: null },
    ]);
    const got = await as(env, org.chat.token).get(org.path('/tables/listings')).expect(200);
    expect(got.body).to.deep.equal(res.body);
  });

  it('normalises defaults: timestamps to ISO 8601 UTC, jsonb kept as JSON', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    const table = await createTable(env, org, 'defaults', [
      { name: 'at', type: 'timestamp', required: false, default: '2024-05-01T10:00:00+10:00', comments: '' },
      { name: 'meta', type: 'jsonb', required: false, default: { b: [1, 2], a: null }, comments: '' },
      { name: 'n', type: 'numeric', required: true, default: 0, comments: '' },
    ]);
    expect(table.fields[0]?.default).to.equal('2024-05-01T00:00:00.000Z');
    expect(table.fields[1]?.default).to.deep.equal({ a: null, b: [1, 2] });
    expect(table.fields[2]?.default).to.equal(0);
  });

  it('refuses bad names, the reserved id, duplicate fields, no fields and defaults of the wrong type', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    const admin = as(env, org.admin.token);
    const field = { name: 'a', type: 'text', required: false, comments: '' };
    const cases: Array<[object, RegExp]> = [
      [{ name: 'bad-name', fields: [field] }, /name/],
      [{ name: 'ok', fields: [{ ...field, name: 'has space' }] }, /name/],
      [{ name: 'ok', fields: [{ ...field, name: 'id' }] }, /'id' is reserved/],
      [{ name: 'ok', fields: [field, { ...field }] }, /'a' is defined twice/],
      [{ name: 'ok', fields: [] }, /fields/],
      [{ name: 'ok', fields: [{ ...field, type: 'varchar' }] }, /type/],
      [
        { name: 'ok', fields: [{ ...field, type: 'numeric', default: 'ten' }] },
        /default of 'a' must be a number/,
      ],
      [
        { name: 'ok', fields: [{ ...field, type: 'timestamp', default: '2024-02-30' }] },
        /default of 'a' must be an ISO 8601/,
      ],
      [{ name: 'ok', fields: [{ name: 'a', type: 'text', required: false }] }, /comments/],
    ];
    for (const [body, message] of cases) {
      const res = await admin.post(org.path('/tables'), body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.message).to.match(message);
    }
    const list = await admin.get(org.path('/tables')).expect(200);
    expect(list.body.totalRows).to.equal(0);
  });

  it('treats names as case-sensitive: fields Name and name are two columns', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org, 'Cased', [
      { name: 'Name', type: 'text', required: false, comments: '' },
      { name: 'name', type: 'numeric', required: false, comments: '' },
    ]);
    await createTable(env, org, 'cased');
    const row = await insertRow(env, org, 'Cased', { Name: 'x', name: 1 });
    expect(row).to.deep.equal({ id: 1, Name: 'x', name: 1 });
    const res = await as(env, org.chat.token)
      .get(org.path('/tables/Cased/data'))
      .query({ filters: 'Name:eq:x:and|||name:eq:1:and' })
      .expect(200);
    expect(res.body.items).to.deep.equal([row]);
  });

  it('keeps table names unique per organization (409), but another organization may reuse a name', async () => {
    const env = await testEnv();
    const [org, other] = await Promise.all([createTestOrg(env), createTestOrg(env)]);
    await createTable(env, org, 'dup');
    const again = await as(env, org.owner.token).post(org.path('/tables'), {
      name: 'dup',
      fields: LISTING_FIELDS,
    });
    expect(again.status).to.equal(409);
    expect(again.body.error).to.include({ code: 'conflict' });
    expect(again.body.error.message).to.contain("'dup'");
    await createTable(env, other, 'dup');
  });

  it('lists tables by name with limit and offset', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    for (const name of ['charlie', 'alpha', 'bravo']) await createTable(env, org, name);
    const first = await as(env, org.chat.token).get(org.path('/tables')).query({ limit: 2 }).expect(200);
    expect(first.body.items.map((t: { name: string }) => t.name)).to.deep.equal(['alpha', 'bravo']);
    expect(first.body).to.include({ totalRows: 3, offset: 0 });
    const rest = await as(env, org.chat.token)
      .get(org.path('/tables'))
      .query({ limit: 2, offset: 2 })
      .expect(200);
    expect(rest.body.items.map((t: { name: string }) => t.name)).to.deep.equal(['charlie']);
    expect(rest.body.offset).to.equal(2);
  });

  it('deletes a table with its rows; a new table of the same name starts empty at id 1', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org, 'gone');
    await insertRow(env, org, 'gone', { title: 'a' });
    await insertRow(env, org, 'gone', { title: 'b' });
    const del = await as(env, org.admin.token).delete(org.path('/tables/gone')).expect(200);
    expect(del.body).to.deep.equal({ organizationId: org.organizationId, tableName: 'gone' });
    await as(env, org.admin.token).get(org.path('/tables/gone')).expect(404);
    await as(env, org.admin.token).get(org.path('/tables/gone/data')).expect(404);
    await as(env, org.admin.token).delete(org.path('/tables/gone')).expect(404);
    await createTable(env, org, 'gone');
    const rows = await as(env, org.chat.token).get(org.path('/tables/gone/data')).expect(200);
    expect(rows.body).to.deep.equal({ items: [], totalRows: 0, offset: 0 });
    expect((await insertRow(env, org, 'gone', { title: 'c' })).id).to.equal(1);
  });

  it('lets chat read tables and rows but refuses every write with 403', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env);
    await createTable(env, org, 'ro');
    const row = await insertRow(env, org, 'ro', { title: 'keep' });
    const chat = as(env, org.chat.token);
    await chat.get(org.path('/tables')).expect(200);
    await chat.get(org.path('/tables/ro')).expect(200);
    const rows = await chat.get(org.path('/tables/ro/data')).expect(200);
    expect(rows.body.items).to.have.length(1);
    const writes = [
      chat.post(org.path('/tables'), { name: 'x', fields: LISTING_FIELDS }),
      chat.delete(org.path('/tables/ro')),
      chat.post(org.path('/tables/ro/data'), { data: { title: 'no' } }),
      chat.post(org.path('/tables/ro/data/batch'), { data: [{ title: 'no' }] }),
      chat.put(org.path(`/tables/ro/data/${row.id}`), { data: { title: 'no' } }),
      chat.delete(org.path(`/tables/ro/data/${row.id}`)),
      chat.put(org.path('/tables/ro/columns/title'), { newName: 'name' }),
      chat.post(org.path('/tables/ro/columns/title/dd-link'), { ddFieldName: 'title' }),
      chat.delete(org.path('/tables/ro/columns/title/dd-link')),
    ];
    for (const [i, res] of (await Promise.all(writes)).entries()) {
      expect(res.status, `write #${i}`).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    }
    const after = await chat.get(org.path('/tables/ro/data')).expect(200);
    expect(after.body.items).to.deep.equal([{ ...row }]);
    // The owner can write, like the admin.
    await as(env, org.owner.token)
      .post(org.path('/tables/ro/data'), { data: { title: 'owner' } })
      .expect(201);
  });

  it('hides a table from another organization: every operation there is 404, and its token is 401 here', async () => {
    const env = await testEnv();
    const [org, other] = await Promise.all([createTestOrg(env), createTestOrg(env)]);
    await createTable(env, org, 'secret');
    const row = await insertRow(env, org, 'secret', { title: 'mine' });
    const them = as(env, other.owner.token);
    const attempts = [
      them.get(other.path('/tables/secret')),
      them.delete(other.path('/tables/secret')),
      them.get(other.path('/tables/secret/data')),
      them.post(other.path('/tables/secret/data'), { data: { title: 'theirs' } }),
      them.post(other.path('/tables/secret/data/batch'), { data: [{ title: 'theirs' }] }),
      them.put(other.path(`/tables/secret/data/${row.id}`), { data: { title: 'theirs' } }),
      them.delete(other.path(`/tables/secret/data/${row.id}`)),
      them.put(other.path('/tables/secret/columns/title'), { newName: 'name' }),
      them.post(other.path('/tables/secret/columns/title/dd-link'), { ddFieldName: 'title' }),
      them.delete(other.path('/tables/secret/columns/title/dd-link')),
    ];
    for (const [i, res] of (await Promise.all(attempts)).entries()) {
      expect(res.status, `attempt #${i}`).to.equal(404);
      expect(res.body.error.code).to.equal('not_found');
    }
    const list = await them.get(other.path('/tables')).expect(200);
    expect(list.body.totalRows).to.equal(0);
    await them.get(org.path('/tables/secret')).expect(401);
    const mine = await as(env, org.chat.token).get(org.path('/tables/secret/data')).expect(200);
    expect(mine.body.items).to.deep.equal([row]);
    expect(
      (await as(env, org.chat.token).get(org.path('/tables/secret')).expect(200)).body.fields[0].name,
    ).to.equal('title');
  });
});
