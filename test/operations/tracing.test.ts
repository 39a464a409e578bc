import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import request from 'supertest';
import { WORKFLOWS } from '@contracts';
import { createApp } from '@api/app';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { startTracing, type Tracing } from '@lib/observability/tracing';
import { createWorker } from '@worker/create-worker';
import { observabilityWorkerOptions } from '@worker/interceptors';
import { bundleWorkflows } from '@worker/workflow-bundle';
import { createRunnableChain, finished } from '@test/helpers/chains';
import { closeTestEnv, testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { ROOT } from '@test/helpers/paths';

const noop = () => undefined;
const silentLogger = { log: noop, trace: noop, debug: noop, info: noop, warn: noop, error: noop };
const HISTORIES = join(ROOT, 'test', 'histories');

// Registers the process's global OpenTelemetry provider: tracing can be started once per process, so this file
// holds every test that needs it.
describe('tracing', function () {
  this.timeout(180_000);
  const exporter = new InMemorySpanExporter();
  let env: TestEnv;
  let tracing: Tracing;
  let deps: Deps;
  let bundle: WorkflowBundleWithSourceMap;
  let stopWorker: () => Promise<void>;
  before(async () => {
    env = await testEnv();
    tracing = startTracing('agent-workspace-test', new SimpleSpanProcessor(exporter));
    // Its own task queue: only this traced worker runs what the traced API starts.
    const config = {
      ...env.config,
      temporal: { ...env.config.temporal, taskQueue: `traced-${randomBytes(4).toString('hex')}` },
    };
    deps = await createDeps(config, { logger: createLogger('silent'), tracing });
    bundle = await bundleWorkflows({ tracing: true, logger: silentLogger });
    const { worker, connection } = await createWorker(config.temporal, deps, { workflowBundle: bundle });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
      await connection.close();
    };
  });
  after(async () => {
    await stopWorker();
    await closeDeps(deps);
    await closeTestEnv();
  });

  it('puts the API request, the workflow it starts and that workflow’s activities in one trace', async () => {
    const org = await createTestOrg(env, 'Traced Org');
    const chain = await createRunnableChain(env, org, [{ stepOrder: 1, instructions: 'Say hi' }]);
    chain.answer({ content: 'hi' });
    exporter.reset();
    const res = await request(createApp(deps))
      .post(org.path(`/chains/${chain.chainId}/run`))
      .set('Authorization', `Bearer ${org.chat.token}`)
      .send({})
      .expect(202);
    const run = await finished(env, org, chain.chainId, res.body.runId as string);
    expect(run.status).to.equal('success');

    const spans = await eventually(() => {
      const all = exporter.getFinishedSpans();
      const named = (prefix: string) => all.filter((s) => s.name.startsWith(prefix));
      return named('RunWorkflow:').length && named('RunActivity:').length ? all : undefined;
    });
    const http = spans.find((s) => s.name === 'POST /orgs/{organizationId}/chains/{actionChainId}/run');
    expect(http, spans.map((s) => s.name).join(', ')).to.not.equal(undefined);
    const traceId = http!.spanContext().traceId;
    const inTrace = (s: ReadableSpan) => s.spanContext().traceId === traceId;
    const start = spans.find((s) => s.name === `StartWorkflow:${WORKFLOWS.chainRun}`);
    const workflow = spans.find((s) => s.name === `RunWorkflow:${WORKFLOWS.chainRun}`);
    const activities = spans.filter((s) => s.name.startsWith('RunActivity:'));
    expect(start && inTrace(start), 'the start is in the request trace').to.equal(true);
    expect(workflow && inTrace(workflow), 'the workflow is in the request trace').to.equal(true);
    expect(activities.length).to.be.greaterThan(0);
    expect(activities.every(inTrace), 'every activity is in the request trace').to.equal(true);
    // The server span is the root of the trace (no caller's traceparent was sent).
    expect(http!.parentSpanId).to.equal(undefined);
  });

  it("continues a caller's W3C traceparent", async () => {
    const org = await createTestOrg(env, 'Traced Org');
    exporter.reset();
    const traceId = randomBytes(16).toString('hex');
    await request(createApp(deps))
      .get(org.path())
      .set('Authorization', `Bearer ${org.apiKey}`)
      .set('traceparent', `00-${traceId}-${randomBytes(8).toString('hex')}-01`)
      .expect(200);
    const http = exporter.getFinishedSpans().find((s) => s.name === 'GET /orgs/{organizationId}');
    expect(http?.spanContext().traceId).to.equal(traceId);
  });

  it('replays every recorded history with the tracing interceptors in the workflow bundle', async () => {
    const workflowIds = JSON.parse(readFileSync(join(HISTORIES, 'workflow-ids.json'), 'utf8')) as Record<
      string,
      string
    >;
    const files = readdirSync(HISTORIES).filter((f) => f.endsWith('.json') && f !== 'workflow-ids.json');
    expect(files).to.not.be.empty;
    for (const file of files) {
      const history = historyFromJSON(JSON.parse(readFileSync(join(HISTORIES, file), 'utf8')));
      await Worker.runReplayHistory(
        { workflowBundle: bundle, sinks: observabilityWorkerOptions(deps.metrics, tracing).sinks },
        history,
        workflowIds[file] ?? file,
      );
    }
  });
});
