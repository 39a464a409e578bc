import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { mutationTestingWorkerOptions } from '@test/helpers/mutation';
import { workflowBundle } from '@test/helpers/worker';
import { ROOT } from '@test/helpers/paths';

// Recorded histories of real runs. Replaying them against today's workflow code fails when a change would
// break running workflows (non-determinism); such changes need `patched()`. Histories are permanent: never
// re-recorded to make replay pass (SHA256SUMS pins them). Record new ones with RECORD_HISTORIES=1 npm test
// (test/helpers/histories.ts), or from a run of `npm start` with
// .stack/py-*/bin/temporal workflow show -w <workflowId> --output json > test/histories/<name>.json,
// then add their sums: (cd test/histories && sha256sum <name>.json >> SHA256SUMS).
const DIR = join(ROOT, 'test', 'histories');

describe('workflow replay', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');
  // The id each history ran under, where its commands depend on it (child workflow ids derive from it).
  const workflowIds = JSON.parse(readFileSync(join(DIR, 'workflow-ids.json'), 'utf8')) as Record<
    string,
    string
  >;

  it('has recorded histories to replay', () => {
    expect(files).to.not.be.empty;
  });

  it('keeps every pinned history exactly as it was recorded', () => {
    const pinned = readFileSync(join(DIR, 'SHA256SUMS'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/\s+/) as [string, string]);
    expect(pinned.map(([, file]) => file)).to.include.members(['agent-turn.json', 'turn-agent-call.json']);
    for (const [sum, file] of pinned) {
      const actual = createHash('sha256')
        .update(readFileSync(join(DIR, file)))
        .digest('hex');
      expect(actual, `${file} was changed: recorded histories are permanent`).to.equal(sum);
    }
  });

  for (const file of files) {
    it(`replays ${file} deterministically`, async () => {
      const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
      // Replay runs workflows in this thread already; under StrykerJS each replay gets a sandbox of its own.
      const { reuseV8Context } = mutationTestingWorkerOptions();
      await Worker.runReplayHistory(
        { workflowBundle: await workflowBundle(), reuseV8Context },
        history,
        workflowIds[file] ?? file,
      );
    });
  }
});
