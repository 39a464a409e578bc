import { expect } from 'chai';
import { startApiProcess } from '@test/helpers/api-process';
import { testEnv } from '@test/helpers/env';

describe('stopping the API process', () => {
  it('exits cleanly when told to stop twice (SIGINT to its group, then SIGTERM from a supervisor)', async function () {
    this.timeout(180_000);
    const env = await testEnv();
    const api = await startApiProcess(env);
    const exited = new Promise<number | null>((resolve) => api.child.once('exit', (code) => resolve(code)));
    api.child.kill('SIGINT');
    api.child.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });
});
