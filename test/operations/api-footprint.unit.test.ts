import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { ROOT } from '@test/helpers/paths';

describe('what the API process loads', () => {
  it('leaves the OpenTelemetry SDK and Temporal’s tracing interceptors unloaded while tracing is off', () => {
    // A fresh process: this one may have loaded them for the tracing tests.
    const script = [
      "require('@api/app');",
      "require('@lib/deps');",
      "require('@api/realtime');",
      'const loaded = Object.keys(require.cache).filter((f) =>',
      '  /node_modules\\/@opentelemetry\\/(sdk-|exporter-|resources)|interceptors-opentelemetry/.test(f));',
      'console.log(JSON.stringify(loaded));',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, JWT_SECRET: 'x'.repeat(32) },
    });
    expect(run.status, run.stderr).to.equal(0);
    expect(JSON.parse(run.stdout)).to.deep.equal([]);
  });
});
