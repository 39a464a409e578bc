import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { ROOT } from '@test/helpers/paths';

const run = promisify(execFile);

// `npm test` runs the suite on the node the stack provisions when the machine's own is older than `engines`
// (stack/provision.mjs: runOnSupportedNode), with that node first on PATH for every process a test starts.
describe('the runtime the suite runs on', () => {
  const engines = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
  ).engines.node;

  it('is a Node.js the package supports (engines)', () => {
    const floor = /^>=(\d+)$/.exec(engines);
    expect(floor, `engines.node is ${engines}`).to.not.equal(null);
    expect(Number(process.versions.node.split('.')[0])).to.be.at.least(Number(floor![1]));
  });

  it('is also the `node` that child processes started by name get (npm scripts, tsx, mocha shebangs)', async () => {
    const { stdout } = await run('node', ['-p', 'process.version + " " + process.execPath'], { cwd: ROOT });
    expect(stdout.trim()).to.equal(`${process.version} ${process.execPath}`);
  });
});
