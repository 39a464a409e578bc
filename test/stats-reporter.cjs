// mocha's spec reporter, plus its own statistics (passes, failures, pending) and each failure's title and first
// line of error written to MOCHA_STATS_FILE, so `npm test` closes with counts mocha computed rather than counts
// read back from its printed summary, and repeats what failed where a reader of the output's end sees it. It also
// writes the slowest test files (their tests' and hooks' durations), to show where a run's minutes go.
const { writeFileSync } = require('node:fs');
const { relative } = require('node:path');
const Mocha = require('mocha');

class SpecWithStats extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failed = [];
    // Per file, its tests' and hooks' durations: mocha's parallel mode replays a file's events when the file has
    // ended, so only the durations it measured can be summed. A hook names no file: a "before" hook counts for the
    // test that follows it, an "after" hook for the test before it.
    const fileMs = new Map();
    const add = (file, ms) => fileMs.set(file, (fileMs.get(file) ?? 0) + (ms ?? 0));
    let beforeMs = 0;
    let lastFile;
    runner.on('hook end', (hook) => {
      if (/^"after/.test(hook.title) && lastFile) add(lastFile, hook.duration);
      else beforeMs += hook.duration ?? 0;
    });
    runner.on('test end', (test) => {
      if (!test.file) return;
      lastFile = relative(process.cwd(), test.file);
      add(lastFile, (test.duration ?? 0) + beforeMs);
      beforeMs = 0;
    });
    runner.on('fail', (test, err) => {
      const message = String(err?.message ?? err)
        .split('\n')[0]
        .slice(0, 300);
      failed.push(
        `${test.fullTitle()} (${test.file ? relative(process.cwd(), test.file) : 'no file'}): ${message}`,
      );
    });
    runner.once('end', () => {
      if (process.env.MOCHA_STATS_FILE)
        writeFileSync(
          process.env.MOCHA_STATS_FILE,
          JSON.stringify({ ...runner.stats, failed, slowest: slowest(fileMs) }),
        );
    });
  }
}

/** The ten files that took longest, as "<s> s <file>". */
function slowest(fileMs) {
  return [...fileMs]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10)
    .map(([file, ms]) => `${Math.round(ms / 1000)} s ${file}`);
}

module.exports = SpecWithStats;
