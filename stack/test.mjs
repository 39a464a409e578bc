// `npm test`: install, provision, start a throwaway stack on the test ports, run mocha against it.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { ROOT, runOnSupportedNode } from './provision.mjs';
import { runSchemathesis } from './schemathesis.mjs';
import { runSoak } from './soak.mjs';
import { startTestStack } from './test-stack.mjs';

await runOnSupportedNode();
const { env, dataDir, stop } = await startTestStack(String(Date.now()));
// SCHEMATHESIS=only checks the contract on its own (no mocha), for whoever is mending a finding.
const contractOnly = process.env.SCHEMATHESIS === 'only';
const wholeSuite = process.argv.length <= 2;
// The whole suite runs its files in parallel, JOBS at once (TEST_JOBS; default one more than the cores): most files
// spend much of their time waiting on the stack (Temporal timers, deadlines, the 30-s freezes of the fault tests,
// which start stacks of their own), and one file at a time left a third of this machine's 2 cores idle. Each job
// prints a file's output in one piece once the file has ended.
const JOBS = Number(process.env.TEST_JOBS ?? availableParallelism() + 1);
const args = wholeSuite ? ['--parallel', '--jobs', String(JOBS), 'test/**/*.test.ts'] : process.argv.slice(2);
// mocha's own statistics, written by test/stats-reporter.cjs when the run ends.
const statsFile = join(dataDir, 'mocha-stats.json');
const mochaCode = contractOnly ? 0 : await runMocha(args, statsFile);
const stats = statsOf(statsFile, mochaCode);
let passed = stats.passes;
let failed = stats.failures;
let code = mochaCode;
// The whole suite in CI (or SCHEMATHESIS=1) also checks the live API against the contract; it counts as one test.
// Beside it the soak runs SOAK_MINUTES (3) on API and worker processes of its own (docs/testing.md): with the whole
// suite in CI unless SOAK=0, and whenever SOAK=1 (`SCHEMATHESIS=only SOAK=1 npm test` runs the two alone); it counts
// as one test too.
const soakWanted =
  process.env.SOAK === '1' || (wholeSuite && !contractOnly && process.env.CI && process.env.SOAK !== '0');
const soak = soakWanted ? runSoak(env, dataDir, Number(process.env.SOAK_MINUTES ?? 3)) : undefined;
const since = Date.now();
const elapsed = () => `${Math.round((Date.now() - since) / 1000)} s`;
if (contractOnly || (wholeSuite && (process.env.CI || process.env.SCHEMATHESIS === '1'))) {
  const stCode = await runSchemathesis(env, dataDir);
  console.log(`schemathesis: ${stCode === 0 ? 'no findings' : 'FINDINGS (see above)'} (${elapsed()})`);
  if (stCode === 0) passed++;
  else failed++;
  code = code || stCode;
}
if (soak) {
  const soakCode = await soak;
  console.log(`soak: ${soakCode === 0 ? 'every invariant holds' : 'BROKEN (see above)'} (${elapsed()})`);
  if (soakCode === 0) passed++;
  else failed++;
  code = code || soakCode;
}
// Where the minutes went, then what failed, repeated last: a long run's output is often read from its end only.
if (stats.slowest?.length) console.log(`slowest test files: ${stats.slowest.join(', ')}`);
for (const failure of stats.failed) console.log(`failed: ${failure}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${stats.pending} skipped`);
await stop();
process.exit(code);

/** A run that ended before mocha could report (a crash in a hook or the loader) counts as one failure. */
function statsOf(file, exitCode) {
  return existsSync(file)
    ? { failed: [], ...JSON.parse(readFileSync(file, 'utf8')) }
    : {
        passes: 0,
        failures: exitCode === 0 ? 0 : 1,
        pending: 0,
        failed: exitCode === 0 ? [] : [`mocha ended with code ${exitCode} before it could report`],
      };
}

function runMocha(files, stats) {
  const mocha = spawn(
    process.execPath,
    [
      join(ROOT, 'node_modules/mocha/bin/mocha.js'),
      '--reporter',
      join(ROOT, 'test/stats-reporter.cjs'),
      ...files,
    ],
    { cwd: ROOT, env: { ...env, MOCHA_STATS_FILE: stats }, stdio: 'inherit' },
  );
  return new Promise((resolve) => mocha.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
}
