import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { ScheduleNotFoundError } from '@temporalio/client';
import { workflowIds } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import { startApiProcess, type ApiProcess } from '@test/helpers/api-process';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createTestOrg } from '@test/helpers/org';
import { connectClientAt } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';
import { startWorkerProcess } from '@test/helpers/worker-process';

/** Temporal's task queue types (temporal.api.enums.v1.TaskQueueType). */
const WORKFLOW_QUEUE = 1;
const ACTIVITY_QUEUE = 2;

/**
 * The scale-out topology on the local stack: two API processes and two worker processes (the real entry points)
 * share one database, Temporal, Redis and S3. This process only scripts the LLM and creates test data: it serves
 * no HTTP, no socket and runs no worker, so every event a client receives crossed processes through Redis.
 */
describe('two API replicas and two workers', () => {
  let env: TestEnv;
  let first: ApiProcess;
  let second: ApiProcess;
  const workers: ChildProcess[] = [];

  before(async function () {
    this.timeout(240_000);
    env = await testEnv();
    workers.push(startWorkerProcess(env), startWorkerProcess(env));
    // Credentials cached far longer than any test: only an announced change can make a replica read one again.
    const longCache = { CREDENTIAL_CACHE_TTL_MS: '300000' };
    [first, second] = await Promise.all([startApiProcess(env, longCache), startApiProcess(env, longCache)]);
  });

  after(async () => {
    workers.forEach((w) => w.kill('SIGKILL'));
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it('runs both workers as pollers of the one task queue', async function () {
    this.timeout(120_000);
    const identities = async (taskQueueType: number) => {
      const res = await env.deps.temporal.client.workflowService.describeTaskQueue({
        namespace: env.config.temporal.namespace,
        taskQueue: { name: env.config.temporal.taskQueue },
        taskQueueType,
      });
      return (res.pollers ?? []).map((p) => p.identity ?? '');
    };
    // The SDK's worker identity is `<pid>@<host>`: each spawned worker shows up as a poller of its own.
    const polledBy = (ids: string[]) => workers.every((w) => ids.some((id) => id.startsWith(`${w.pid}@`)));
    await eventually(async () => polledBy(await identities(WORKFLOW_QUEUE)), 90_000);
    await eventually(async () => polledBy(await identities(ACTIVITY_QUEUE)), 90_000);
  });

  it('leaves no reconciler Schedule of its workers behind once a test ends (test/setup.ts)', async () => {
    // The workers polled in the test before, so they had made it (worker/main.ts, before polling).
    const handle = env.deps.temporal.client.schedule.getHandle(
      workflowIds.reconcileSchedules(env.config.temporal.taskQueue),
    );
    const found = await handle.describe().then(
      () => true,
      (err: unknown) => {
        if (err instanceof ScheduleNotFoundError) return false;
        throw err;
      },
    );
    expect(found).to.equal(false);
  });

  it('streams a turn posted to one API replica to a socket connected only to the other', async function () {
    this.timeout(180_000);
    const org = await createTestOrg(env, 'Scale-out Org');
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    const chunks = ['streamed ', 'across ', 'two ', 'replicas'];
    env.llm.on({ model }, { content: chunks.join(''), chunks });

    const client = await connectClientAt(second.url, org.organizationId, org.owner.token);
    try {
      const res = await request(first.url)
        .post(org.path('/conversations'))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .send({ agentId, message: 'hello from replica one' })
        .expect(201);
      const { requestId, conversationId } = res.body as { requestId: string; conversationId: string };

      const final = await client.waitFor(
        (e) => e.payload.requestId === requestId && e.payload.type === 'message',
        120_000,
      );
      expect(
        (final.payload as { message: { content: Array<{ text: string }> } }).message.content[0]!.text,
      ).to.equal(chunks.join(''));
      const deltas = client.turn(requestId).filter((e) => e.payload.type === 'delta');
      expect(deltas.map((e) => e.payload.text).join('')).to.equal(chunks.join(''));
      expect(deltas.every((e) => e.payload.conversationId === conversationId)).to.equal(true);

      // The replica the socket is on reads the stored reply too: one database behind both.
      const stored = await request(second.url)
        .get(org.path(`/conversations/${conversationId}`))
        .set('Authorization', `Bearer ${org.owner.token}`)
        .expect(200);
      expect((stored.body.messages as Array<{ role: string }>).map((m) => m.role)).to.deep.equal([
        'user',
        'assistant',
      ]);
      const handle = env.deps.temporal.client.workflow.getHandle(
        workflowIds.turn(org.organizationId, conversationId, requestId),
      );
      expect((await handle.result()).status).to.equal('complete');
    } finally {
      client.close();
    }
  });

  it('disconnects, on the other replica, the socket of an API key revoked through one', async function () {
    this.timeout(60_000);
    const org = await createTestOrg(env, 'Scale-out Keys Org');
    const owner = (agent: request.Test) => agent.set('Authorization', `Bearer ${org.owner.token}`);
    const created = await owner(request(first.url).post(org.path('/api-keys'))).send({ description: 'ws' });
    expect(created.status).to.equal(201);
    const keyClient = await connectClientAt(second.url, org.organizationId, created.body.key as string);
    const bystander = await connectClientAt(second.url, org.organizationId, org.owner.token);
    try {
      await owner(request(first.url).delete(org.path(`/api-keys/${created.body.apiKeyId}`))).expect(200);
      expect(await keyClient.disconnected()).to.equal('io server disconnect');
      expect(bystander.socket.connected).to.equal(true);
    } finally {
      keyClient.close();
      bystander.close();
    }
  });

  it('refuses, on the other replica, an API key revoked through one, though it had cached the key', async function () {
    this.timeout(60_000);
    const org = await createTestOrg(env, 'Scale-out Cache Org');
    const owner = (agent: request.Test) => agent.set('Authorization', `Bearer ${org.owner.token}`);
    const created = await owner(request(first.url).post(org.path('/api-keys'))).send({
      description: 'cached',
    });
    expect(created.status).to.equal(201);
    const read = (url: string) =>
      request(url)
        .get(org.path())
        .set('Authorization', `Bearer ${created.body.key as string}`);
    for (const { url } of [first, second]) {
      await read(url).expect(200);
      await read(url).expect(200);
    }
    await owner(request(first.url).delete(org.path(`/api-keys/${created.body.apiKeyId}`))).expect(200);
    await read(first.url).expect(401);
    await eventually(async () => (await read(second.url)).status === 401, 30_000);
  });
});
