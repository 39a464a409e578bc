import { expect } from 'chai';
import { ExecutionCache, MAX_CACHED_STATE_CHARS } from '@lib/chains/engine/execution-cache';
import type { ExecutionSnapshot } from '@lib/chains/engine/execution-snapshot';

const input = (runId: string) => ({ organizationId: 'org_1', runId, generation: 1 });
const snapshot = (stateChars: number) => ({ stateChars, version: 0 }) as unknown as ExecutionSnapshot;

describe("a worker's copies of chain executions", () => {
  it('keeps a copy of a small state and never of a large one', () => {
    const cache = new ExecutionCache();
    cache.set(input('a'), snapshot(MAX_CACHED_STATE_CHARS));
    cache.set(input('b'), snapshot(MAX_CACHED_STATE_CHARS + 1));
    expect(cache.get(input('a'))).to.not.equal(undefined);
    expect(cache.get(input('b'))).to.equal(undefined);
    // A copy that grows too large replaces nothing: the older copy of the same execution is gone too.
    cache.set(input('a'), snapshot(MAX_CACHED_STATE_CHARS + 1));
    expect(cache.get(input('a'))).to.equal(undefined);
  });

  it('holds a bounded number of executions, dropping the least recently used', () => {
    const cache = new ExecutionCache(2);
    cache.set(input('a'), snapshot(1));
    cache.set(input('b'), snapshot(1));
    cache.get(input('a'));
    cache.set(input('c'), snapshot(1));
    expect(cache.get(input('b'))).to.equal(undefined);
    expect(cache.get(input('a'))).to.not.equal(undefined);
    expect(cache.get(input('c'))).to.not.equal(undefined);
  });
});
