import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testEnv, type TestEnv } from './helpers/env';
import { as } from './helpers/org';

const run = promisify(execFile);
const ROOT = join(__dirname, '..');

describe('operator CLI', () => {
  let env: TestEnv;
  before(async () => {
    env = await testEnv();
  });

  const cli = async (...args: string[]) => {
    const { stdout } = await run('npm', ['run', '--silent', 'cli', '--', ...args], {
      cwd: ROOT,
      env: { ...process.env, JWT_SECRET: env.config.auth.jwtSecret, MONGODB_URI: env.config.mongodbUri },
    });
    const lines = stdout.trim().split('\n');
    expect(lines).to.have.length(1);
    return JSON.parse(lines[0]!) as Record<string, string>;
  };

  it('bootstraps an organization whose session token and API key work, then mints sessions', async function () {
    this.timeout(120_000);
    const email = `boot-${Date.now()}@example.test`;
    const boot = await cli('bootstrap', '--org-name', 'Boot Co', '--email', email, '--name', 'Bo Otstrap');
    expect(boot).to.have.all.keys('organizationId', 'userId', 'sessionToken', 'apiKey');
    const path = `/orgs/${boot.organizationId}`;
    const org = await as(env, boot.sessionToken!).get(path).expect(200);
    expect(org.body.name).to.equal('Boot Co');
    const me = await as(env, boot.apiKey!).get(`${path}/users/${boot.userId}`).expect(200);
    expect(me.body).to.include({ role: 'owner', email });
    // The bootstrap key has every permission, assume_role.write included.
    await as(env, boot.apiKey!)
      .post(`${path}/assume-role`, { userId: 'crm-1', userEmail: `end-${email}` })
      .expect(200);

    const session = await cli('session', '--org', boot.organizationId!, '--user', boot.userId!);
    await as(env, session.sessionToken!).get(`${path}/api-keys`).expect(200);

    await as(env, boot.sessionToken!).put(path, { name: 'Boot Company' }).expect(200);
    const pending = (await cli('org-change', 'list', '--org', boot.organizationId!)) as unknown as Array<{
      changeId: string;
    }>;
    expect(pending).to.have.length(1);
    await cli('org-change', 'approve', '--org', boot.organizationId!, '--change', pending[0]!.changeId);
    expect((await as(env, boot.sessionToken!).get(path).expect(200)).body.name).to.equal('Boot Company');
  });
});
