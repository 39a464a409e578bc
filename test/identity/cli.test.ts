import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { workflowIds } from '@contracts';
import { promisify } from 'node:util';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createRunnableChain } from '@test/helpers/chains';
import { as, createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { ROOT } from '@test/helpers/paths';

const run = promisify(execFile);

describe('operator CLI', () => {
  let env: TestEnv;
  before(async () => {
    env = await testEnv();
  });

  const cliOut = async (...args: string[]) => {
    const { stdout } = await run('npm', ['run', '--silent', 'cli', '--', ...args], {
      cwd: ROOT,
      env: { ...process.env, JWT_SECRET: env.config.auth.jwtSecret, MONGODB_URI: env.config.mongodbUri },
    });
    return stdout;
  };
  const cli = async (...args: string[]) => {
    const lines = (await cliOut(...args)).trim().split('\n');
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

  it("shows and sets an organization's admission bounds, which the API applies", async function () {
    this.timeout(120_000);
    const org = await createTestOrg(env, 'Bounded Org');
    type Usage = Record<string, { unfinished: number; limit: number }>;
    const setLimit = async (kind: string, limit: string) =>
      (await cli(
        'admission',
        'set',
        '--org',
        org.organizationId,
        '--kind',
        kind,
        '--limit',
        limit,
      )) as unknown as Usage;
    const set = await setLimit('chain_runs', '1');
    expect(set.chain_runs).to.include({ unfinished: 0, limit: 1 });
    expect(set.webhook_deliveries!.limit).to.equal(env.config.admission.limits.webhook_deliveries);
    // No worker runs here: the first run stays unfinished and fills the bound.
    const chain = await createRunnableChain(env, org, [{ stepOrder: 1, instructions: 'Report' }]);
    const run = () => as(env, org.chat.token).post(org.path(`/chains/${chain.chainId}/run`), {});
    await run().expect(202);
    expect((await run().expect(429)).body.error.code).to.equal('backlog_full');
    const shown = (await cli('admission', 'show', '--org', org.organizationId)) as unknown as Usage;
    expect(shown.chain_runs).to.include({ unfinished: 1, limit: 1 });
    const reset = await setLimit('chain_runs', 'default');
    expect(reset.chain_runs!.limit).to.equal(env.config.admission.limits.chain_runs);
    const refused = await setLimit('messages', '5')
      .then(() => undefined)
      .catch((err: { code?: number; stderr?: string }) => err);
    expect(refused?.code).to.equal(2);
    expect(refused?.stderr).to.include('--kind must be one of webhook_deliveries, chain_runs');
    // The run started while bounded is still waiting for a worker; it must not run under a later suite's.
    const query = `OrganizationId = '${org.organizationId}' AND ExecutionStatus = 'Running'`;
    for await (const w of env.deps.temporal.client.workflow.list({ query }))
      await env.deps.temporal.client.workflow.getHandle(w.workflowId).terminate('test ended');
  });

  it('prints its usage for --help, for all commands or for one', async function () {
    this.timeout(60_000);
    const all = await cliOut('--help');
    for (const verb of ['bootstrap', 'session', 'org-change', 'credits', 'admission', 'schedule'])
      expect(all).to.match(new RegExp(`^  ${verb} `, 'm'));
    const one = await cliOut('credits', '--help');
    expect(
      one
        .trim()
        .split('\n')
        .map((l) => l.trim().split(' ')[0]),
    ).to.deep.equal(['credits', 'credits']);
    expect(await cliOut()).to.equal(all);
  });

  it('bootstrap --export prints shell lines whose API, ORG and KEY work as pasted', async function () {
    this.timeout(60_000);
    const out = await cliOut(
      'bootstrap',
      '--org-name',
      'Quick Co',
      '--email',
      `quick-${Date.now()}@example.test`,
      '--name',
      'Quinn',
      '--export',
    );
    const match = /^export API='([^']+)' ORG='(org_[^']+)' KEY='([^']+)'\n$/.exec(out);
    expect(match, out).to.not.equal(null);
    const [, api, orgId, key] = match!;
    expect(api).to.equal(env.config.publicBaseUrl);
    const org = await as(env, key!).get(`/orgs/${orgId}`).expect(200);
    expect(org.body.name).to.equal('Quick Co');
  });

  it('fires a schedule trigger now, as a fire workflow of its own, and only within its organization', async function () {
    this.timeout(60_000);
    const org = await createTestOrg(env, 'Fire Now Org');
    const other = await createTestOrg(env, 'Other Fire Org');
    const created = await as(env, org.owner.token)
      .post(org.path('/schedules'), { name: 'Yearly', cronExpression: '0 0 1 1 *' })
      .expect(201);
    const triggerId = created.body.triggerId as string;
    const schedule = env.deps.temporal.client.schedule.getHandle(
      workflowIds.schedule(org.organizationId, triggerId),
    );
    const fires = async () => {
      const ids: string[] = [];
      const prefix = workflowIds.scheduleFireNowPrefix(org.organizationId, triggerId);
      for await (const w of env.deps.temporal.client.workflow.list({
        query: `WorkflowId STARTS_WITH '${prefix}'`,
      }))
        ids.push(w.workflowId);
      return ids;
    };
    expect(await fires()).to.deep.equal([]);
    const fired = await cli('schedule', 'fire', '--org', org.organizationId, '--schedule', triggerId);
    expect(fired).to.deep.equal({ triggerId, fired: true });
    await eventually(async () => expect(await fires()).to.have.length(1));
    const refused = await cli('schedule', 'fire', '--org', other.organizationId, '--schedule', triggerId)
      .then(() => undefined)
      .catch((err: { code?: number; stderr?: string }) => err);
    expect(refused?.code).to.equal(1);
    expect(refused?.stderr).to.include(`schedule trigger ${triggerId} is not in ${other.organizationId}`);
    expect(await fires()).to.have.length(1);
    // The fire's run waits for a worker none runs here; it must not run under a later suite's.
    await schedule.delete();
    const query = `OrganizationId = '${org.organizationId}' AND ExecutionStatus = 'Running'`;
    for await (const w of env.deps.temporal.client.workflow.list({ query }))
      await env.deps.temporal.client.workflow.getHandle(w.workflowId).terminate('test ended');
  });
});
