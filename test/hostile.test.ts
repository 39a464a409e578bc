import { expect } from 'chai';
import { testEnv } from './helpers/env';
import { startHostileStack, type HostileStack } from './helpers/hostile';
import { createKb, settled, uploadFile } from './helpers/kb';
import { as, createTestOrg, type TestOrg } from './helpers/org';

/*
 * Issue 32, end to end: each case sends what a hostile (or careless) tenant could send to the service as it
 * ships — the API and the worker each in its own process — and checks that the tenant gets a clear 4xx or error
 * status while `/healthz` keeps answering, another organization's chat turn is answered, and the worker process
 * is the one that started. The budgets themselves are tested closer to their code; this suite is the promise.
 */
describe('hostile input never takes the service down', function () {
  this.timeout(600_000);
  let stack: HostileStack;
  let attacker: TestOrg;

  before(async () => {
    const base = await testEnv();
    stack = await startHostileStack(base);
    attacker = await createTestOrg(base, 'Hostile Org');
  });
  after(async () => stack?.stop());

  const api = (token = attacker.admin.token) => as(stack.env, token);

  describe('patterns', () => {
    const extglob = encodeURIComponent('+(+(*))#');

    it('refuses a backtracking filePattern in a knowledge base search without freezing the API', async () => {
      const kb = await createKb(stack.env, attacker);
      const file = await uploadFile(stack.env, attacker, kb, 'minutes-q3-board.txt', 'The board met.');
      expect((await settled(stack.env, attacker, kb, file.fileId, 120_000)).status).to.equal('READY');
      const res = await stack.survives(() =>
        api(attacker.chat.token).get(attacker.path(`/knowledgebases/${kb}/search?q=hello&filePattern=${extglob}`)),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.be.a('string');
      expect(res.body.error.message).to.match(/filePattern/);
    });

    it('refuses the same pattern in the global search, which reaches other organizations', async () => {
      const res = await stack.survives(() =>
        api(attacker.chat.token).get(attacker.path(`/knowledgebases/search?q=hello&filePattern=${extglob}`)),
      );
      expect(res.status).to.equal(400);
      expect(res.body.error.message).to.match(/filePattern/);
    });
  });
});
