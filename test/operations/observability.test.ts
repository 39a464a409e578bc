import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Registry } from 'prom-client';
import request from 'supertest';
import { workflowIds, WORKFLOWS } from '@contracts';
import { createApp } from '@api/app';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { createMetrics } from '@lib/observability/metrics';
import { startMetricsServer } from '@lib/observability/metrics-auth';
import { createWorker } from '@worker/create-worker';
import { observeActivities } from '@worker/interceptors';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain, runToEnd } from '@test/helpers/chains';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { workflowBundle } from '@test/helpers/worker';

const noop = () => undefined;
const silentSdkLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
const TOKEN = 'metrics-token-for-the-tests-0123456789';

/** The value of one series of a metric (0 when the series does not exist yet). */
async function valueOf(registry: Registry, name: string, labels: Record<string, string>) {
  const metric = await registry.getSingleMetric(name)?.get();
  const series = metric?.values.find((v) =>
    Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value),
  );
  return series?.value ?? 0;
}

async function workflowIdsMatching(env: TestEnv, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of env.deps.temporal.client.workflow.list({ query })) ids.push(w.workflowId);
  return ids;
}

describe('observability', function () {
  this.timeout(120_000);
  let env: TestEnv;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let workerDeps: Deps;
  let stopWorker: () => Promise<void>;
  before(async () => {
    env = await testEnv();
    // The worker's own deps, so its metrics (activities, model tokens) can be read.
    workerDeps = await createDeps(env.config, { logger: createLogger('silent'), process: 'worker' });
    const { worker, connection } = await createWorker(env.config.temporal, workerDeps, {
      workflowBundle: await workflowBundle(),
    });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
      await connection.close();
      await closeDeps(workerDeps);
    };
  });
  after(async () => {
    await stopWorker();
    await closeTestEnv();
  });
  beforeEach(async () => {
    orgA = await createTestOrg(env, 'Observed Org A');
    orgB = await createTestOrg(env, 'Observed Org B');
  });

  describe('search attributes', () => {
    it("tags a chain run and a conversation turn with their organization: a query for it finds them, another organization's does not", async () => {
      const chain = await createRunnableChain(env, orgA, [{ stepOrder: 1, instructions: 'Say hi' }]);
      chain.answer({ content: 'hi' });
      const run = await runToEnd(env, orgA, chain.chainId);
      expect(run.status).to.equal('success');
      const chainWorkflowId = workflowIds.chainRun(orgA.organizationId, run.runId, run.generation);

      const { agentId, model } = await createTestAgent(env, orgA.organizationId);
      env.llm.on({ model }, { content: 'Hello.' });
      const turn = await as(env, orgA.owner.token)
        .post(orgA.path('/conversations'), { agentId, message: 'hi', requestId: 'sa-turn-1' })
        .expect(201);
      const turnWorkflowId = workflowIds.turn(
        orgA.organizationId,
        turn.body.conversationId as string,
        'sa-turn-1',
      );
      await env.deps.temporal.client.workflow.getHandle(turnWorkflowId).result();

      const inA = await eventually(async () => {
        const ids = await workflowIdsMatching(env, `OrganizationId = "${orgA.organizationId}"`);
        return ids.includes(chainWorkflowId) && ids.includes(turnWorkflowId) ? ids : undefined;
      });
      expect(inA).to.include.members([chainWorkflowId, turnWorkflowId]);
      expect(await workflowIdsMatching(env, `OrganizationId = "${orgB.organizationId}"`)).to.be.empty;
      // The chain and the agent are searchable too.
      expect(await workflowIdsMatching(env, `ActionChainId = "${chain.chainId}"`)).to.deep.equal([
        chainWorkflowId,
      ]);
      expect(await workflowIdsMatching(env, `AgentId = "${agentId}"`)).to.deep.equal([turnWorkflowId]);
    });
  });

  describe('metrics', () => {
    const withToken = (token: string | undefined) =>
      createApp({
        ...env.deps,
        config: { ...env.config, observability: { ...env.config.observability, metricsToken: token } },
      });

    it('GET /metrics is for the operator only: 404 when not configured, 401 without a token, 403 for any other', async () => {
      const off = await request(withToken(undefined))
        .get('/metrics')
        .set('Authorization', `Bearer ${TOKEN}`)
        .expect(404);
      expect(off.body.error.code).to.equal('not_found');
      const app = withToken(TOKEN);
      expect((await request(app).get('/metrics').expect(401)).body.error.code).to.equal('unauthorized');
      for (const other of [orgA.apiKey, orgA.owner.token, `${TOKEN}x`]) {
        const refused = await request(app)
          .get('/metrics')
          .set('Authorization', `Bearer ${other}`)
          .expect(403);
        expect(refused.body.error.code).to.equal('forbidden');
        expect(refused.text).to.not.contain('http_requests_total');
      }
    });

    it('counts requests by openapi route template and status (never the raw path), and workflow starts by type', async () => {
      const app = withToken(TOKEN);
      const route = { method: 'GET', route: '/orgs/{organizationId}', status_code: '200' };
      const before = await valueOf(env.deps.metrics.registry, 'http_requests_total', route);
      await request(app).get(orgA.path()).set('Authorization', `Bearer ${orgA.apiKey}`).expect(200);
      await request(app).get(orgB.path()).set('Authorization', `Bearer ${orgB.apiKey}`).expect(200);
      await request(app).get(orgA.path()).set('Authorization', `Bearer ${orgB.apiKey}`).expect(401);
      expect(await valueOf(env.deps.metrics.registry, 'http_requests_total', route)).to.equal(before + 2);

      const started = { workflow_type: WORKFLOWS.chainRun, outcome: 'started' };
      const startsBefore = await valueOf(
        env.deps.metrics.registry,
        'temporal_workflow_starts_total',
        started,
      );
      const chain = await createRunnableChain(env, orgA, [{ stepOrder: 1, instructions: 'Say hi' }]);
      chain.answer({ content: 'hi' });
      await runToEnd(env, orgA, chain.chainId);
      expect(await valueOf(env.deps.metrics.registry, 'temporal_workflow_starts_total', started)).to.equal(
        startsBefore + 1,
      );

      const res = await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`).expect(200);
      expect(res.headers['content-type']).to.match(/^text\/plain/);
      expect(res.text).to.contain('route="/orgs/{organizationId}",status_code="401"');
      expect(res.text).to.contain('http_request_duration_seconds_bucket{');
      // Raw paths (with ids) are never a label.
      expect(res.text).to.not.contain(`route="/orgs/${orgA.organizationId}"`);
    });

    it("counts the model tokens of each organization's calls in the worker", async () => {
      const prompt = { organization_id: orgA.organizationId, kind: 'prompt' };
      const completion = { organization_id: orgA.organizationId, kind: 'completion' };
      const chain = await createRunnableChain(env, orgA, [{ stepOrder: 1, instructions: 'Say hello' }]);
      chain.answer({ content: 'hello there' });
      await runToEnd(env, orgA, chain.chainId);
      const usage = (
        await as(env, orgA.owner.token).get(orgA.path('/credits')).query({ usageLimit: 10 }).expect(200)
      ).body as { recentUsage: Array<{ promptTokens: number; completionTokens: number }> };
      const billed = usage.recentUsage.reduce(
        (sum, u) => ({ p: sum.p + u.promptTokens, c: sum.c + u.completionTokens }),
        { p: 0, c: 0 },
      );
      expect(billed.p).to.be.greaterThan(0);
      expect(await valueOf(workerDeps.metrics.registry, 'llm_tokens_total', prompt)).to.equal(billed.p);
      expect(await valueOf(workerDeps.metrics.registry, 'llm_tokens_total', completion)).to.equal(billed.c);
      expect(
        await valueOf(workerDeps.metrics.registry, 'llm_tokens_total', {
          organization_id: orgB.organizationId,
          kind: 'prompt',
        }),
      ).to.equal(0);
    });

    it('counts failed activity attempts by activity type, and logs activity lines with their workflow and run', async () => {
      const metrics = createMetrics();
      const lines: Array<Record<string, unknown>> = [];
      const logger = createLogger(
        'info',
        {},
        new Writable({
          write(chunk: Buffer, _enc, done) {
            for (const l of chunk.toString().split('\n').filter(Boolean))
              lines.push(JSON.parse(l) as Record<string, unknown>);
            done();
          },
        }),
      );
      const activityEnv = new MockActivityEnvironment(
        {
          activityType: 'flakyActivity',
          workflowExecution: { workflowId: 'wf-observed-1', runId: 'run-observed-1' },
        },
        { interceptors: [observeActivities(metrics)], logger: silentSdkLogger },
      );
      const ok = await activityEnv.run(() => {
        logger.info('inside the activity');
        return Promise.resolve('done');
      });
      expect(ok).to.equal('done');
      let thrown: unknown;
      try {
        await activityEnv.run(() => Promise.reject(ApplicationFailure.retryable('down')));
      } catch (err) {
        thrown = err;
      }
      expect(thrown).to.be.instanceOf(ApplicationFailure);
      expect(
        await valueOf(metrics.registry, 'temporal_activity_failures_total', {
          activity_type: 'flakyActivity',
        }),
      ).to.equal(1);
      const line = lines.find((l) => l.msg === 'inside the activity');
      expect(line).to.include({
        workflowId: 'wf-observed-1',
        runId: 'run-observed-1',
        activityType: 'flakyActivity',
      });
    });

    it("serves the worker's metrics on its own port behind the same token", async () => {
      const metrics = createMetrics({ process: 'worker' });
      metrics.activityFailures.inc({ activity_type: 'someActivity' });
      const server = await startMetricsServer({
        port: 0,
        host: '127.0.0.1',
        token: TOKEN,
        registry: metrics.registry,
        logger: createLogger('silent'),
      });
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        const get = (path: string, token?: string) =>
          fetch(`${url}${path}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        const missing = await get('/metrics');
        expect(missing.status).to.equal(401);
        expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('unauthorized');
        expect((await get('/metrics', 'not-the-token')).status).to.equal(403);
        expect((await get('/other', TOKEN)).status).to.equal(404);
        const ok = await get('/metrics', TOKEN);
        expect(ok.status).to.equal(200);
        expect(await ok.text()).to.contain(
          'temporal_activity_failures_total{activity_type="someActivity",process="worker"} 1',
        );
      } finally {
        server.close();
      }
    });
  });
});
