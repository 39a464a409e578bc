// mocha's spec reporter, plus its own statistics (passes, failures, pending) and each failure's title and first
// line of error written to MOCHA_STATS_FILE, so `npm test` closes with counts mocha computed rather than counts
// read back from its printed summary, and repeats what failed where a reader of the output's end sees it.
const { writeFileSync } = require('node:fs');
const { relative } = require('node:path');
const Mocha = require('mocha');

class SpecWithStats extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failed = [];
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
        writeFileSync(process.env.MOCHA_STATS_FILE, JSON.stringify({ ...runner.stats, failed }));
    });
  }
}

module.exports = SpecWithStats;
