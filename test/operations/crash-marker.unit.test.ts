import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { expect } from 'chai';
import { CrashedBefore, withCrashMarker, type CrashMarkerStore } from '@lib/temporal/crash-marker';

/** A store in memory that records every write. */
function memoryStore(initial: string | null = null) {
  const writes: (string | null)[] = [];
  let value = initial;
  const store: CrashMarkerStore = {
    read: () => Promise.resolve(value),
    write: (marker) => {
      writes.push(marker);
      value = marker;
      return Promise.resolve();
    },
  };
  return { store, writes, current: () => value };
}

const execution = { workflowId: 'ingest-org-file-1', runId: 'run-1' };
function attempt<T>(n: number, fn: () => Promise<T>): Promise<T> {
  const env = new MockActivityEnvironment(
    { attempt: n, activityId: '7', workflowExecution: execution },
    { logger: new DefaultLogger('ERROR') },
  );
  return env.run(fn);
}

describe('withCrashMarker', () => {
  it('marks the attempt before the work and clears the mark after it, whether the work succeeds or throws', async () => {
    const { store, writes, current } = memoryStore();
    let seen: string | null = null;
    expect(
      await attempt(1, () => withCrashMarker(store, () => Promise.resolve(((seen = current()), 'done')))),
    ).to.equal('done');
    expect(seen).to.equal('ingest-org-file-1/run-1/7#1');
    let strict: boolean | undefined;
    await attempt(1, () => withCrashMarker(store, (s) => Promise.resolve((strict = s))));
    expect(strict).to.equal(false);
    const failed = await attempt(2, () =>
      withCrashMarker(store, () => Promise.reject(new Error('S3 is down'))),
    ).catch((err: Error) => err);
    expect(failed.message).to.equal('S3 is down');
    expect(writes).to.deep.equal([
      'ingest-org-file-1/run-1/7#1',
      null,
      'ingest-org-file-1/run-1/7#1',
      null,
      'ingest-org-file-1/run-1/7#2',
      null,
    ]);
  });

  it('keeps trying to clear its mark while the store refuses the write, so a failure is not taken for a crash', async () => {
    const { store, current } = memoryStore();
    let refusals = 2;
    const flaky: CrashMarkerStore = {
      read: () => store.read(),
      write: (marker) =>
        marker === null && refusals-- > 0
          ? Promise.reject(new Error('database timed out'))
          : store.write(marker),
    };
    const failed = await attempt(1, () =>
      withCrashMarker(flaky, () => Promise.reject(new Error('database timed out'))),
    ).catch((err: Error) => err);
    expect(failed.message).to.equal('database timed out');
    expect(refusals).to.equal(-1);
    expect(current()).to.equal(null);
    // The next attempt finds no mark: it runs the work as usual, not under the strict budget.
    let strict: boolean | undefined;
    await attempt(2, () => withCrashMarker(store, (s) => Promise.resolve((strict = s))));
    expect(strict).to.equal(false);
  });

  it('runs the work once more under the strict budget when an earlier attempt left its mark (its worker died)', async () => {
    const { store, writes } = memoryStore('ingest-org-file-1/run-1/7#1');
    let strict: boolean | undefined;
    expect(
      await attempt(2, () => withCrashMarker(store, (s) => Promise.resolve(((strict = s), 'ran')))),
    ).to.equal('ran');
    expect(strict).to.equal(true);
    expect(writes).to.deep.equal(['ingest-org-file-1/run-1/7#2#strict', null]);
  });

  it('refuses to run the work a third time when the strict attempt left its mark too', async () => {
    const { store } = memoryStore('ingest-org-file-1/run-1/7#2#strict');
    let ran = false;
    const outcome = await attempt(3, () => withCrashMarker(store, () => Promise.resolve((ran = true)))).catch(
      (e: Error) => e,
    );
    expect(outcome).to.be.instanceOf(CrashedBefore);
    expect((outcome as CrashedBefore).attempt).to.equal(2);
    expect(ran).to.equal(false);
  });

  it("ignores another run's or activity's mark, and its own attempt's (a re-delivered task)", async () => {
    for (const marker of [
      'ingest-org-file-1/run-0/7#1',
      'ingest-org-file-1/run-1/8#1',
      'ingest-org-file-1/run-1/7#3',
      'ingest-org-file-1/run-1/7#3#strict',
    ]) {
      const { store } = memoryStore(marker);
      expect(await attempt(3, () => withCrashMarker(store, () => Promise.resolve('ran')))).to.equal('ran');
    }
  });
});
