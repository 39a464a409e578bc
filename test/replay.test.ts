import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './helpers/worker';

// Recorded histories of real runs. Replaying them against today's workflow code fails when a change would
// break running workflows (non-determinism); such changes need `patched()`. Record one from a run of
// `npm start` with: .stack/py-*/bin/temporal workflow show -w <workflowId> --output json > test/histories/<name>.json
const DIR = join(__dirname, 'histories');

describe('workflow replay', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

  it('has recorded histories to replay', () => {
    expect(files).to.not.be.empty;
  });

  for (const file of files) {
    it(`replays ${file} deterministically`, async () => {
      const history = historyFromJSON(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, file);
    });
  }
});
