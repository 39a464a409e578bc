import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { TestEnv } from './env';

export const HISTORIES_DIR = join(__dirname, '..', 'histories');

/**
 * With RECORD_HISTORIES=1, saves the finished workflow's history as test/histories/<name>.json for the replay
 * test, unless that file exists: recorded histories are permanent (a change of workflow shape goes behind
 * patched(), the old history stays). Otherwise does nothing.
 */
export async function recordHistory(env: TestEnv, workflowId: string, name: string) {
  const file = join(HISTORIES_DIR, `${name}.json`);
  if (process.env.RECORD_HISTORIES !== '1' || existsSync(file)) return;
  const handle = env.deps.temporal.client.workflow.getHandle(workflowId);
  await handle.result();
  const json = JSON.parse(historyToJSON(await handle.fetchHistory())) as unknown;
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
  // Replay runs it under the same id (child workflow ids derive from it).
  const idsFile = join(HISTORIES_DIR, 'workflow-ids.json');
  const ids = JSON.parse(readFileSync(idsFile, 'utf8')) as Record<string, string>;
  writeFileSync(idsFile, `${JSON.stringify({ ...ids, [`${name}.json`]: workflowId }, null, 2)}\n`);
}
