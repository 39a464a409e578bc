import { expect } from 'chai';
import { AppError } from '@lib/errors';
import { buildRowFilter, likePattern, parseFilterSegment, splitFilterSegments } from '@lib/tables/filters';
import { parseOrderBy } from '@lib/tables/order-by';
import { RowChecker } from '@lib/tables/rows';
import { parseIsoTimestamp } from '@lib/tables/timestamp';
import { canonicalJson, type ColumnType } from '@lib/tables/values';

const columns = new Map<string, ColumnType>([
  ['id', 'id'],
  ['a', 'text'],
  ['n', 'numeric'],
  ['b', 'boolean'],
  ['t', 'timestamp'],
  ['j', 'jsonb'],
]);

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).status).to.equal(400);
    return (err as AppError).message;
  }
  throw new Error('expected a 400');
}

describe('Custom tables: grammar units', () => {
  it('splits segments on ||| only when present, else on commas that follow a join', () => {
    expect(splitFilterSegments('a:in:x,y:and|||n:gt:1:or')).to.deep.equal(['a:in:x,y:and', 'n:gt:1:or']);
    expect(splitFilterSegments('a:in:x,y:and,n:gt:1:OR')).to.deep.equal(['a:in:x,y:and', 'n:gt:1:OR']);
    expect(splitFilterSegments('a:eq:Paris, France:and')).to.deep.equal(['a:eq:Paris, France:and']);
    expect(splitFilterSegments('a:eq:x')).to.deep.equal(['a:eq:x']);
  });

  it('reads the value between the second and the last colon', () => {
    expect(parseFilterSegment('t:gte:2024-01-01T10:20:30+10:00:or', 0)).to.deep.equal({
      column: 't',
      operator: 'gte',
      value: '2024-01-01T10:20:30+10:00',
      join: 'or',
    });
    expect(parseFilterSegment('a:EQ:::and', 0)).to.deep.equal({
      column: 'a',
      operator: 'eq',
      value: ':',
      join: 'and',
    });
    expect(parseFilterSegment('a:eq::and', 0).value).to.equal('');
  });

  it('builds left-to-right nesting, flattening runs of the same join', () => {
    const q = buildRowFilter('a:eq:x:or|||n:gt:1:or|||b:eq:true:and|||j:eq:1:and|||id:lt:9:or', columns);
    expect(q).to.deep.equal({
      $or: [
        {
          $and: [
            { $or: [{ 'd.a': { $eq: 'x' } }, { 'd.n': { $gt: 1 } }] },
            { 'd.b': { $eq: true } },
            { 'd.j': { $eq: '1' } },
          ],
        },
        { _id: { $lt: 9 } },
      ],
    });
    expect(buildRowFilter(undefined, columns)).to.deep.equal({});
    expect(buildRowFilter('  ', columns)).to.deep.equal({});
  });

  it('types filter values by column and escapes like patterns', () => {
    expect(buildRowFilter('t:in:2024-01-01,2024-01-02T00:00:00Z:and', columns)).to.deep.equal({
      'd.t': { $in: [new Date('2024-01-01T00:00:00Z'), new Date('2024-01-02T00:00:00Z')] },
    });
    expect(buildRowFilter('a:ilike:a.b (c):and', columns)).to.deep.equal({
      'd.a': { $regex: '^(?>[\\s\\S]*?a\\.b)(?>[\\s\\S]*?\\(c\\))', $options: 'i' },
    });
    expect(likePattern('  ^x$ |y  ')).to.equal('^(?>[\\s\\S]*?\\^x\\$)(?>[\\s\\S]*?\\|y)');
    expect(new RegExp(likePattern('[a-z]+')).test('[a-z]+')).to.equal(true);
    expect(new RegExp(likePattern('[a-z]+')).test('abc')).to.equal(false);
  });

  it('caps segments and in-list sizes', () => {
    const many = Array.from({ length: 51 }, () => 'n:gt:1:and').join('|||');
    expect(refusal(() => buildRowFilter(many, columns))).to.contain('at most 50 segments');
    const longIn = `n:in:${Array.from({ length: 1001 }, (_, i) => i).join(',')}:and`;
    expect(refusal(() => buildRowFilter(longIn, columns))).to.contain('at most 1000 values');
  });

  it('parses orderBy with id appended as the last key', () => {
    expect(parseOrderBy('n:desc, a', columns)).to.deep.equal([
      ['d.n', -1],
      ['d.a', 1],
      ['_id', 1],
    ]);
    expect(parseOrderBy('id:desc', columns)).to.deep.equal([['_id', -1]]);
    expect(parseOrderBy(undefined, columns)).to.deep.equal([['_id', 1]]);
    expect(refusal(() => parseOrderBy('n:asc:x', columns))).to.contain('expected field:asc or field:desc');
  });

  it('parses ISO 8601 timestamps as instants and refuses impossible ones', () => {
    expect(parseIsoTimestamp('2024-02-29')?.toISOString()).to.equal('2024-02-29T00:00:00.000Z');
    expect(parseIsoTimestamp('2024-02-29T23:59')?.toISOString()).to.equal('2024-02-29T23:59:00.000Z');
    expect(parseIsoTimestamp('2024-03-01T01:02:03.45678-0530')?.toISOString()).to.equal(
      '2024-03-01T06:32:03.456Z',
    );
    expect(parseIsoTimestamp('2024-03-01t01:02:03,5z')?.toISOString()).to.equal('2024-03-01T01:02:03.500Z');
    expect(parseIsoTimestamp('0099-01-01')?.toISOString()).to.equal('0099-01-01T00:00:00.000Z');
    for (const bad of [
      '2023-02-29',
      '2024-13-01',
      '2024-01-01T24:00',
      '2024-01-01T10:60',
      '01/02/2024',
      '2024-1-1',
      '',
    ]) {
      expect(parseIsoTimestamp(bad), bad).to.equal(null);
    }
  });

  it('canonical JSON sorts keys at every level', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).to.equal('{"a":[{"c":2,"d":1}],"b":1}');
  });

  it('checks insert rows: defaults, nulls and reserved keys', () => {
    const fields = [
      {
        name: 'x',
        type: 'numeric' as const,
        required: true,
        defaultJson: '3',
        comments: '',
        ddFieldName: null,
      },
      {
        name: 'y',
        type: 'text' as const,
        required: false,
        defaultJson: null,
        comments: '',
        ddFieldName: null,
      },
    ];
    expect(new RowChecker(fields).insert({})).to.deep.equal({ ok: true, values: { x: 3, y: null } });
    expect(new RowChecker(fields).insert({ x: null })).to.deep.equal({
      ok: false,
      problems: [{ field: 'x', message: "'x' is required and cannot be null" }],
    });
    const proto = JSON.parse('{"__proto__": 1, "constructor": 2}') as unknown;
    const res = new RowChecker(fields).insert(proto);
    expect(res.ok).to.equal(false);
  });
});
