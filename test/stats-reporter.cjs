// mocha's spec reporter, plus its own statistics (passes, failures, pending) written to MOCHA_STATS_FILE, so
// `npm test` closes with counts mocha computed rather than counts read back from its printed summary.
const { writeFileSync } = require('node:fs');
const Mocha = require('mocha');

class SpecWithStats extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      if (process.env.MOCHA_STATS_FILE)
        writeFileSync(process.env.MOCHA_STATS_FILE, JSON.stringify(runner.stats));
    });
  }
}

module.exports = SpecWithStats;
