import { expect } from 'chai';
import fc from 'fast-check';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg, type TestOrg } from '@test/helpers/org';
import { createTable, idsOf, insertBatch } from '@test/helpers/tables-fixtures';

/*
 * The `filters` grammar of GET …/tables/{name}/data against an evaluator written here from the spec's wording:
 * `field:operator:value:join` segments, joined left to right without brackets (the first join ignored);
 * like/ilike are contains-matches whose spaces are wildcards (like case-sensitive); in/nin take comma lists;
 * nulls match only ne/nin (docs/tables.md). Random filters run against the real API and database (fast-check prints the
 * seed of a failure, and `seed` in fc.assert's options replays it).
 */

type Row = { id: number; title: string; price: number | null; sold: boolean };
type Segment = { column: 'id' | 'title' | 'price' | 'sold'; operator: string; value: string; join: string };

const TITLES = ['Red chair', 'red table', 'Blue Chair', 'Lamp', 'old red lamp', 'chair', 'Table lamp', 'b'];
const PRICES = [null, 0, 5, 10, 12.5, -3, 100];
const WORDS = ['red', 'Red', 'chair', 'Chair', 'lamp', 'a', 'e', 'table', 'old lamp', 'red  la', 'b', 'zzz'];
const NUMBERS = [-3, 0, 5, 7, 10, 12.5, 100, 1e3];

function holds(row: Row, s: Segment): boolean {
  const op = s.operator.toLowerCase();
  const items = s.value.split(',');
  if (s.column === 'title') {
    const v = row.title;
    const parts = s.value.split(' ').filter(Boolean);
    const contains = (text: string, ps: string[]) => {
      let at = 0;
      for (const p of ps) {
        const found = text.indexOf(p, at);
        if (found < 0) return false;
        at = found + p.length;
      }
      return true;
    };
    if (op === 'like') return contains(v, parts);
    if (op === 'ilike')
      return contains(
        v.toLowerCase(),
        parts.map((p) => p.toLowerCase()),
      );
    return compare(v, op, s.value, items);
  }
  const value = s.column === 'id' ? row.id : s.column === 'price' ? row.price : row.sold;
  const read = (t: string) => (s.column === 'sold' ? t.toLowerCase() === 'true' : Number(t));
  if (value === null) return op === 'ne' || op === 'nin';
  return compare(value, op, read(s.value), items.map(read));
}

function compare<T extends string | number | boolean>(v: T, op: string, x: T, xs: T[]): boolean {
  switch (op) {
    case 'eq':
      return v === x;
    case 'ne':
      return v !== x;
    case 'gt':
      return v > x;
    case 'lt':
      return v < x;
    case 'gte':
      return v >= x;
    case 'lte':
      return v <= x;
    case 'in':
      return xs.includes(v);
    case 'nin':
      return !xs.includes(v);
  }
  throw new Error(`no operator ${op}`);
}

function evaluate(rows: Row[], segments: Segment[]): number[] {
  return rows
    .filter((row) =>
      segments.reduce<boolean>(
        (acc, s, i) =>
          i === 0
            ? holds(row, s)
            : s.join.toLowerCase() === 'and'
              ? acc && holds(row, s)
              : acc || holds(row, s),
        false,
      ),
    )
    .map((r) => r.id);
}

const join = fc.constantFrom('and', 'or', 'AND', 'Or');
const cased = (ops: string[]) => fc.constantFrom(...ops, ...ops.map((o) => o.toUpperCase()));
const list = <T>(values: T[]) =>
  fc.array(fc.constantFrom(...values), { minLength: 1, maxLength: 3 }).map((xs) => xs.join(','));

const segment: fc.Arbitrary<Segment> = fc.oneof(
  fc.record({
    column: fc.constant('title' as const),
    operator: cased(['eq', 'ne', 'gt', 'lt', 'gte', 'lte', 'like', 'ilike']),
    value: fc.constantFrom(...TITLES, ...WORDS),
    join,
  }),
  fc.record({
    column: fc.constant('title' as const),
    operator: cased(['in', 'nin']),
    value: list([...TITLES, 'nothing']),
    join,
  }),
  fc.record({
    column: fc.constant('price' as const),
    operator: cased(['eq', 'ne', 'gt', 'lt', 'gte', 'lte']),
    value: fc.constantFrom(...NUMBERS.map(String)),
    join,
  }),
  fc.record({
    column: fc.constant('price' as const),
    operator: cased(['in', 'nin']),
    value: list(NUMBERS.map(String)),
    join,
  }),
  fc.record({
    column: fc.constant('sold' as const),
    operator: cased(['eq', 'ne', 'in', 'nin']),
    value: fc.constantFrom('true', 'false', 'TRUE'),
    join,
  }),
  fc.record({
    column: fc.constant('id' as const),
    operator: cased(['eq', 'ne', 'gt', 'lt', 'gte', 'lte']),
    value: fc.integer({ min: 0, max: 30 }).map(String),
    join,
  }),
);

const text = (s: Segment) => `${s.column}:${s.operator}:${s.value}:${s.join}`;

describe('Custom tables: filters against an in-memory evaluator (property)', function () {
  this.timeout(300_000);
  let env: TestEnv;
  let org: TestOrg;
  let rows: Row[];

  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Filter Properties Org');
    await createTable(env, org, 'items', [
      { name: 'title', type: 'text', required: true, comments: 'Title' },
      { name: 'price', type: 'numeric', required: false, comments: 'Price' },
      { name: 'sold', type: 'boolean', required: false, comments: 'Sold' },
    ]);
    // every title with every price once (sold alternating): each operator splits the rows many ways
    const data = TITLES.flatMap((title, t) =>
      PRICES.filter((_, p) => (t + p) % 2 === 0).map((price, p) => ({
        title,
        price,
        sold: (t + p) % 3 === 0,
      })),
    );
    const inserted = await insertBatch(env, org, 'items', data);
    expect(inserted.failed).to.equal(0);
    rows = data.map((d, i) => ({ ...d, id: inserted.ids[i]! }));
  });

  /** The API answers the segments joined with `separator` with the rows the evaluator selects. */
  async function agrees(segments: Segment[], separator: string) {
    const filters = segments.map(text).join(separator);
    const got = await idsOf(env, org, 'items', { filters });
    const ascending = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(ascending(got), filters).to.deep.equal(ascending(evaluate(rows, segments)));
  }

  it('returns exactly the rows the evaluator selects, for one to five segments joined with |||', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 5 }), async (segments) => {
        await agrees(segments, '|||');
      }),
      { numRuns: 100 },
    );
  });

  it('reads the legacy comma separator like |||, when no value holds a comma', async () => {
    const plain = segment.filter((s) => !s.value.includes(','));
    await fc.assert(
      fc.asyncProperty(fc.array(plain, { minLength: 2, maxLength: 4 }), async (segments) => {
        await agrees(segments, ',');
      }),
      { numRuns: 30 },
    );
  });
});
