import { expect } from 'chai';
import fc from 'fast-check';
import { selectElements } from '@lib/chains/expressions';

/*
 * What a for-each step fans out over (docs/chains.md: forEachElement): a path that selects many values
 * — wildcard, filter, union, slice — fans out over what it selects, possibly nothing; any other path must select
 * exactly one array. The reference below evaluates the handful of path forms generated here by hand.
 */

type Item = { n: number; ok: boolean };
type State = { rows?: unknown; group: { rows?: unknown } } & Record<string, unknown>;

const SOURCES = ['$.rows', '$.group.rows'] as const;

type Selector =
  | { kind: 'whole' }
  | { kind: 'wildcard' }
  | { kind: 'index'; i: number }
  | { kind: 'slice'; from: number; to: number }
  | { kind: 'union'; indexes: number[] }
  | { kind: 'above'; k: number }
  | { kind: 'ok' };

function pathOf(source: string, s: Selector): string {
  switch (s.kind) {
    case 'whole':
      return source;
    case 'wildcard':
      return `${source}[*]`;
    case 'index':
      return `${source}[${s.i}]`;
    case 'slice':
      return `${source}[${s.from}:${s.to}]`;
    case 'union':
      return `${source}[${s.indexes.join(',')}]`;
    case 'above':
      return `${source}[?(@.n > ${s.k})]`;
    case 'ok':
      return `${source}[?(@.ok)]`;
  }
}

type Expected = { elements: unknown[] } | { problem: RegExp };

function describeValue(v: unknown) {
  return v === null ? 'null' : typeof v;
}

function reference(value: unknown, s: Selector): Expected {
  const arr = Array.isArray(value) ? (value as unknown[]) : undefined;
  // Goessner JSONPath (jsonpath-plus) reads `[i]` as a property: `[-1]` is a key an array does not have (only a
  // slice counts from the end), and a string's `[0]` is its first character.
  const indexable = arr ?? (typeof value === 'string' ? [...value] : []);
  const at = (i: number) => (i >= 0 && i < indexable.length ? [indexable[i]] : []);
  const children: unknown[] =
    arr ?? (value !== null && typeof value === 'object' ? Object.values(value) : []);
  const passes = (pred: (x: Item) => boolean) =>
    children.filter((x) => x !== null && typeof x === 'object' && pred(x as Item));
  switch (s.kind) {
    case 'whole':
      if (value === undefined) return { problem: /selects nothing/ };
      return arr
        ? { elements: arr }
        : { problem: new RegExp(`selects ${describeValue(value)}, not an array`) };
    case 'index': {
      const [one] = at(s.i);
      if (!at(s.i).length) return { problem: /selects nothing/ };
      return Array.isArray(one) ? { elements: one } : { problem: /not an array/ };
    }
    case 'wildcard':
      return { elements: children };
    case 'slice':
      // As JavaScript slices, so a slice ending at 0 selects nothing (docs/chains.md).
      return { elements: arr ? arr.slice(s.from, s.to) : [] };
    case 'union':
      return { elements: s.indexes.flatMap(at) };
    case 'above':
      return { elements: passes((x) => x.n > s.k) };
    case 'ok':
      return { elements: passes((x) => Boolean(x.ok)) };
  }
}

const item = fc.record({ n: fc.integer({ min: -5, max: 5 }), ok: fc.boolean() });
const content = fc.oneof(
  { weight: 6, arbitrary: fc.array(item, { maxLength: 6 }) },
  { weight: 1, arbitrary: fc.array(fc.array(item, { maxLength: 2 }), { maxLength: 3 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(undefined, null, 7, 'text', {
      a: { n: 3, ok: true },
      b: { n: -1, ok: false },
    }),
  },
);
const index = fc.integer({ min: -7, max: 7 });
const selector: fc.Arbitrary<Selector> = fc.oneof(
  fc.constant({ kind: 'whole' as const }),
  fc.constant({ kind: 'wildcard' as const }),
  index.map((i) => ({ kind: 'index' as const, i })),
  fc.tuple(index, index).map(([from, to]) => ({ kind: 'slice' as const, from, to })),
  fc
    .array(fc.nat({ max: 6 }), { minLength: 2, maxLength: 3 })
    .map((indexes) => ({ kind: 'union' as const, indexes })),
  fc.integer({ min: -6, max: 6 }).map((k) => ({ kind: 'above' as const, k })),
  fc.constant({ kind: 'ok' as const }),
);

describe('for-each selection (forEachElement) against a reference (fast-check)', () => {
  it('fans out over what the path selects, or names why it cannot', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SOURCES), content, selector, (source, value, s) => {
        const state: State = { group: {} };
        // undefined: the key is absent
        if (value !== undefined && source === '$.rows') state.rows = value;
        if (value !== undefined && source === '$.group.rows') state.group.rows = value;
        const path = pathOf(source, s);
        const got = selectElements(path, state);
        const expected = reference(value, s);
        if ('elements' in expected)
          expect(got, path).to.deep.equal({ ok: true, elements: expected.elements });
        else {
          expect(got.ok, path).to.equal(false);
          expect((got as { problem: string }).problem, path).to.match(expected.problem);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('for-each selection: what the reference above does not draw', () => {
  it('fans out over everything a recursive descent finds', () => {
    expect(selectElements('$..n', { input: { a: { n: 1 }, b: { n: 2 } } })).to.deep.equal({
      ok: true,
      elements: [1, 2],
    });
  });

  it("reads a property whose name holds '?(' as a name, not a filter", () => {
    expect(selectElements("$['a?(b']", { 'a?(b': [1, 2] })).to.deep.equal({ ok: true, elements: [1, 2] });
  });

  it('names null as what a path selects when it is not an array', () => {
    expect(selectElements('$.input.x', { input: { x: null } })).to.deep.equal({
      ok: false,
      problem: 'forEachElement $.input.x selects null, not an array',
    });
  });
});
