import { expect } from 'chai';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { createTable, idsOf, insertRow, queryError } from '@test/helpers/tables-fixtures';

// Five rows chosen so every operator separates them differently. Ids are 1..5 in this order.
const ROWS = [
  {
    title: 'Red Apple',
    price: 10,
    sold: false,
    listed_at: '2024-01-01T00:00:00Z',
    extras: { color: 'red', n: 1 },
  },
  {
    title: 'green apple pie',
    price: 20.5,
    sold: true,
    listed_at: '2024-02-15T12:30:00+10:00',
    extras: { color: 'green' },
  },
  { title: 'Banana: ripe', price: -5, sold: false, listed_at: '2024-03-01', extras: [1, 2] },
  { title: 'cherry', price: null, sold: true, listed_at: null, extras: null },
  { title: 'a.b*c (x)', price: 100, sold: false, listed_at: '2023-12-31T23:59:59.999Z', extras: 'plain' },
];

describe('Custom tables: filters and orderBy', () => {
  let env: TestEnv;
  let org: TestOrg;
  const ids = (filters: string, orderBy?: string) =>
    idsOf(env, org, 'listings', orderBy ? { filters, orderBy } : { filters });
  const sorted = (orderBy: string) => idsOf(env, org, 'listings', { orderBy });

  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env);
    await createTable(env, org);
    for (const row of ROWS) await insertRow(env, org, 'listings', row);
  });

  it('text: eq ne gt lt gte lte compare strings exactly, by code point', async () => {
    expect(await ids('title:eq:cherry:and')).to.deep.equal([4]);
    expect(await ids('title:eq:Cherry:and')).to.deep.equal([]);
    expect(await ids('title:ne:cherry:and')).to.deep.equal([1, 2, 3, 5]);
    expect(await ids('title:gt:b:and')).to.deep.equal([2, 4]);
    expect(await ids('title:lt:S:and')).to.deep.equal([1, 3]);
    expect(await ids('title:gte:cherry:and')).to.deep.equal([2, 4]);
    expect(await ids('title:lte:Red Apple:and')).to.deep.equal([1, 3]);
  });

  it('text: like is a case-sensitive contains with spaces as wildcards, ilike ignores case', async () => {
    expect(await ids('title:like:apple:and')).to.deep.equal([2]);
    expect(await ids('title:like:Red App:and')).to.deep.equal([1]);
    expect(await ids('title:like:gr pie:and')).to.deep.equal([2]);
    expect(await ids('title:ilike:APPLE:and')).to.deep.equal([1, 2]);
    expect(await ids('title:ilike:red   apple:and')).to.deep.equal([1]);
    expect(await ids('title:ilike:e p:and')).to.deep.equal([1, 2]);
  });

  it('accepts the grammars as people and browsers send them: colons and pipes unencoded, + for a space', async () => {
    const raw = async (query: string) => {
      const res = await as(env, org.owner.token)
        .get(org.path(`/tables/listings/data?${query}`))
        .expect(200);
      return (res.body.items as Array<{ id: number }>).map((r) => r.id);
    };
    expect(await raw('filters=title:ilike:red+apple:and')).to.deep.equal([1]);
    expect(await raw('filters=title:like:apple:and|||sold:eq:true:and&orderBy=price:desc')).to.deep.equal([
      2,
    ]);
    expect(
      await raw(new URLSearchParams({ filters: 'title:ilike:e p:and', orderBy: 'id:desc' }).toString()),
    ).to.deep.equal([2, 1]);
  });

  it('text: like/ilike treat regex characters literally and never run caller input as a pattern', async () => {
    expect(await ids('title:like:.:and')).to.deep.equal([5]);
    expect(await ids('title:like:b*c:and')).to.deep.equal([5]);
    expect(await ids('title:like:a.b*c (x):and')).to.deep.equal([5]);
    expect(await ids('title:like:.*:and')).to.deep.equal([]);
    expect(await ids('title:ilike:^red:and')).to.deep.equal([]);
    expect(await ids('title:like:(:and')).to.deep.equal([5]);
    expect(await ids('title:eq:{"$ne":null}:and')).to.deep.equal([]);
  });

  it('text: in and nin take comma-separated values', async () => {
    expect(await ids('title:in:cherry,Red Apple:and')).to.deep.equal([1, 4]);
    expect(await ids('title:nin:cherry,Red Apple:and')).to.deep.equal([2, 3, 5]);
  });

  it('numeric: values compare as numbers, null only matches ne and nin', async () => {
    expect(await ids('price:eq:20.5:and')).to.deep.equal([2]);
    expect(await ids('price:ne:10:and')).to.deep.equal([2, 3, 4, 5]);
    expect(await ids('price:gt:9:and')).to.deep.equal([1, 2, 5]);
    expect(await ids('price:gt:10:and')).to.deep.equal([2, 5]);
    expect(await ids('price:lt:10:and')).to.deep.equal([3]);
    expect(await ids('price:gte:10:and')).to.deep.equal([1, 2, 5]);
    expect(await ids('price:lte:-5:and')).to.deep.equal([3]);
    expect(await ids('price:in:10, 100:and')).to.deep.equal([1, 5]);
    expect(await ids('price:nin:10,100:and')).to.deep.equal([2, 3, 4]);
    expect(await ids('price:eq:1e2:and')).to.deep.equal([5]);
  });

  it('boolean: eq ne in nin', async () => {
    expect(await ids('sold:eq:true:and')).to.deep.equal([2, 4]);
    expect(await ids('sold:eq:FALSE:and')).to.deep.equal([1, 3, 5]);
    expect(await ids('sold:ne:true:and')).to.deep.equal([1, 3, 5]);
    expect(await ids('sold:in:true:and')).to.deep.equal([2, 4]);
    expect(await ids('sold:nin:false:and')).to.deep.equal([2, 4]);
  });

  it('timestamp: values are instants, whatever their zone, and may contain colons', async () => {
    expect(await ids('listed_at:eq:2024-02-15T02:30:00Z:and')).to.deep.equal([2]);
    expect(await ids('listed_at:eq:2024-02-15T12:30:00.000+10:00:and')).to.deep.equal([2]);
    expect(await ids('listed_at:ne:2024-03-01:and')).to.deep.equal([1, 2, 4, 5]);
    expect(await ids('listed_at:gt:2024-01-01T00:00:00Z:and')).to.deep.equal([2, 3]);
    expect(await ids('listed_at:gte:2024-01-01T10:00:00+10:00:and')).to.deep.equal([1, 2, 3]);
    expect(await ids('listed_at:lt:2024-01-01:and')).to.deep.equal([5]);
    expect(await ids('listed_at:lte:2024-01-01T00:00:00.000Z:and')).to.deep.equal([1, 5]);
    expect(await ids('listed_at:in:2024-03-01T00:00:00Z,2024-01-01:and')).to.deep.equal([1, 3]);
    expect(await ids('listed_at:nin:2024-03-01T00:00:00Z,2024-01-01:and')).to.deep.equal([2, 4, 5]);
  });

  it('jsonb: eq/ne/in/nin compare JSON (key order aside), like/ilike search its JSON text', async () => {
    expect(await ids('extras:eq:{"n":1,"color":"red"}:and')).to.deep.equal([1]);
    expect(await ids('extras:ne:[1,2]:and')).to.deep.equal([1, 2, 4, 5]);
    expect(await ids('extras:eq:plain:and')).to.deep.equal([5]);
    expect(await ids('extras:in:"plain":and')).to.deep.equal([5]);
    expect(await ids('extras:nin:"plain":and')).to.deep.equal([1, 2, 3, 4]);
    expect(await ids('extras:like:green:and')).to.deep.equal([2]);
    expect(await ids('extras:ilike:RED:and')).to.deep.equal([1]);
  });

  it('id: compares as an integer', async () => {
    expect(await ids('id:gt:3:and')).to.deep.equal([4, 5]);
    expect(await ids('id:in:1,5:and')).to.deep.equal([1, 5]);
    expect(await ids('id:lte:2:and')).to.deep.equal([1, 2]);
  });

  it('joins apply left to right without precedence; the first join is ignored', async () => {
    // (title = Red Apple OR sold) AND price > 15, not title = Red Apple OR (sold AND price > 15)
    expect(await ids('title:eq:Red Apple:and|||sold:eq:true:or|||price:gt:15:and')).to.deep.equal([2]);
    // (title = Red Apple AND sold) OR price > 15, not title = Red Apple AND (sold OR price > 15)
    expect(await ids('title:eq:Red Apple:or|||sold:eq:true:and|||price:gt:15:or')).to.deep.equal([2, 5]);
    expect(await ids('sold:eq:true:or|||price:gt:50:or')).to.deep.equal([2, 4, 5]);
    expect(await ids('sold:eq:true:and|||price:gt:50:and')).to.deep.equal([]);
    expect(await ids('price:gt:0:and|||price:lt:50:and|||sold:eq:false:and')).to.deep.equal([1]);
  });

  it('accepts the legacy comma form, keeping comma-separated in lists and colons inside values', async () => {
    expect(await ids('title:in:cherry,Red Apple:and,price:gt:5:and')).to.deep.equal([1]);
    expect(await ids('listed_at:gte:2024-02-01T00:00:00Z:and,sold:eq:false:and')).to.deep.equal([3]);
    expect(await ids('sold:eq:true:or,price:gt:50:or')).to.deep.equal([2, 4, 5]);
    expect(await ids('title:eq:Banana: ripe:and')).to.deep.equal([3]);
    expect(await ids('price:in:10,100:or,title:eq:cherry:or')).to.deep.equal([1, 4, 5]);
  });

  it('refuses a malformed segment, an unknown field or operator, a wrong-typed value, naming the segment', async () => {
    const refusals: Array<[string, RegExp]> = [
      [
        'price:gt:10',
        /segment 1 \('price:gt:10'\): expected field:operator:value:join; every segment needs its join/,
      ],
      ['price:gt:and', /segment 1 .*expected field:operator:value:join/],
      ['price:gt:10:maybe', /segment 1 .*join must be 'and' or 'or', got 'maybe'/],
      [':eq:1:and', /segment 1 .*field name is empty/],
      ['sold:eq:true:and|||nope:eq:1:and', /segment 2 .*unknown field 'nope'/],
      ['price:between:1:and', /segment 1 .*unknown operator 'between'/],
      ['price:like:1:and', /operator 'like' does not apply to numeric field 'price'/],
      ['sold:gt:false:and', /operator 'gt' does not apply to boolean field 'sold'/],
      ['listed_at:ilike:2024:and', /operator 'ilike' does not apply to timestamp field 'listed_at'/],
      ['extras:gt:1:and', /operator 'gt' does not apply to jsonb field 'extras'/],
      ['id:like:1:and', /operator 'like' does not apply to id field 'id'/],
      ['price:gt:ten:and', /'ten' is not a number for numeric field 'price'/],
      ['price:in:1,two:and', /'two' is not a number/],
      ['sold:eq:yes:and', /'yes' is not true or false/],
      ['listed_at:gt:yesterday:and', /'yesterday' is not an ISO 8601 timestamp/],
      ['id:eq:1.5:and', /'1.5' is not an integer id/],
      ['title:eq:a:and|||', /segment 2/],
    ];
    for (const [filters, message] of refusals) {
      expect(await queryError(env, org, 'listings', { filters }), filters).to.match(message);
    }
  });

  it('orders by any field and id, in the given order, with id as the final tie-break', async () => {
    expect(await sorted('price:desc')).to.deep.equal([5, 2, 1, 3, 4]);
    expect(await sorted('price:asc')).to.deep.equal([4, 3, 1, 2, 5]);
    expect(await sorted('sold:asc,price:desc')).to.deep.equal([5, 1, 3, 2, 4]);
    expect(await sorted('title:asc')).to.deep.equal([3, 1, 5, 4, 2]);
    expect(await sorted('listed_at:desc')).to.deep.equal([3, 2, 1, 5, 4]);
    expect(await sorted('id:desc')).to.deep.equal([5, 4, 3, 2, 1]);
    expect(await sorted('sold:desc')).to.deep.equal([2, 4, 1, 3, 5]);
    expect(await sorted('sold:desc,id:desc')).to.deep.equal([4, 2, 5, 3, 1]);
    expect(await sorted('sold')).to.deep.equal([1, 3, 5, 2, 4]);
    expect(await ids('sold:eq:false:and', 'price:desc')).to.deep.equal([5, 1, 3]);
  });

  it('refuses an unknown field, a bad direction, a repeated field or an empty item in orderBy', async () => {
    expect(await queryError(env, org, 'listings', { orderBy: 'nope:asc' })).to.match(/unknown field 'nope'/);
    expect(await queryError(env, org, 'listings', { orderBy: 'price:up' })).to.match(
      /direction must be asc or desc/,
    );
    expect(await queryError(env, org, 'listings', { orderBy: 'price:asc,price:desc' })).to.match(
      /already ordered/,
    );
    expect(await queryError(env, org, 'listings', { orderBy: 'price:asc,' })).to.match(/orderBy item 2/);
  });

  it('pages stably through rows whose order values tie', async () => {
    const tied = await createTestOrg(env);
    await createTable(env, tied, 'ties');
    const data = Array.from({ length: 25 }, (_, i) => ({ title: i % 2 ? 'same' : 'other', price: 1 }));
    await as(env, tied.admin.token).post(tied.path('/tables/ties/data/batch'), { data }).expect(200);
    const seen: number[] = [];
    for (const offset of [0, 10, 20]) {
      seen.push(...(await idsOf(env, tied, 'ties', { orderBy: 'price:asc,title:desc', limit: 10, offset })));
    }
    const same = Array.from({ length: 25 }, (_, i) => i + 1).filter((id) => (id - 1) % 2 === 1);
    const other = Array.from({ length: 25 }, (_, i) => i + 1).filter((id) => (id - 1) % 2 === 0);
    expect(seen).to.deep.equal([...same, ...other]);
  });
  it('text: like with many wildcards stays cheap on a long value that does not match (issue 32)', async () => {
    // `a[\s\S]*a…b` backtracks over every split of 6,000 `a`s (length to the power of the wildcards); the
    // anchored atomic form finds each part once. The backtracking form ends in 400 query_timeout here.
    await createTable(env, org, 'notes', [{ name: 'body', type: 'text', required: true, comments: 'Body' }]);
    const long = await insertRow(env, org, 'notes', { body: 'a'.repeat(6000) });
    const short = await insertRow(env, org, 'notes', { body: 'a then b' });
    const notes = (filters: string) => idsOf(env, org, 'notes', { filters });
    expect(await notes('body:like:a a a a a a a a b:and')).to.deep.equal([]);
    expect(await notes('body:like:a b:and')).to.deep.equal([short.id]);
    expect(await notes('body:ilike:A A A:and')).to.deep.equal([long.id]);
    expect(await notes('body:ilike:A B:and')).to.deep.equal([short.id]);
  });
});
