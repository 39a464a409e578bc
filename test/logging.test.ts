import { expect } from 'chai';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '@api/app';
import { createLogger } from '@lib/logger';
import { testEnv, type TestEnv } from './helpers/env';
import { createTestOrg, type TestOrg } from './helpers/org';

/** The app with production logging (level info) into memory. */
function loggedApp(env: TestEnv) {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const app = createApp({ ...env.deps, logger: createLogger('info', {}, sink) });
  return { app, text: () => lines.join('\n'), lines };
}

describe('request logging', () => {
  let env: TestEnv;
  let org: TestOrg;
  before(async () => {
    env = await testEnv();
    org = await createTestOrg(env, 'Logging Org');
  });

  it('logs every request with its organization, and never a credential or cookie', async () => {
    const { app, text, lines } = loggedApp(env);
    await request(app).get(org.path()).set('Authorization', `Bearer ${org.apiKey}`).expect(200);
    await request(app)
      .get(org.path('/users'))
      .set('Authorization', `Bearer ${org.owner.token}`)
      .set('Cookie', 'session=cookie-secret-value')
      .expect(200);
    // A refused credential is logged too, and redacted as well.
    await request(app).get(org.path()).set('Authorization', 'Bearer awk_not-a-real-key-value').expect(401);
    expect(lines.length).to.be.at.least(3);
    const logged = text();
    expect(logged).to.contain(org.organizationId);
    expect(logged).to.contain('[redacted]');
    for (const secret of [org.apiKey, org.owner.token, 'cookie-secret-value', 'awk_not-a-real-key-value']) {
      expect(logged).to.not.contain(secret);
    }
  });
});
