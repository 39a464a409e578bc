import { expect } from 'chai';
import request from 'supertest';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain, userText } from '@test/helpers/chains';
import { startFaultStack, type FaultStack } from '@test/helpers/fault-stack';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { as, createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { interactiveTaskQueue } from '@lib/temporal/client';

// Issue 16, operations: with turns, ingestions and webhook deliveries in flight, the API, the worker, Temporal and
// the database are killed (SIGKILL) one at a time and started again; Temporal and the database are also frozen
// (SIGSTOP), which only a deadline on every call turns into an answer. Nothing accepted is lost, every run ends,
// and while Temporal or the database is down the API answers 503 with the error body. The test has a stack of
// its own (both on disk), so killing them disturbs no other test file.

/** What a scripted turn answers to `message`: streamed in 12 chunks, 150 ms apart, so turns are in flight. */
const replyChunks = (message: string) => Array.from({ length: 12 }, (_, i) => `${message}/${i} `);

/** About 80 chunks of text: a few seconds of embedding work in the worker. */
const document = (tag: string) =>
  Array.from(
    { length: 400 },
    (_, i) => `Record ${i} of ${tag}: the reading on meter ${i * 7} was ${i * 13} units on day ${i % 28}.`,
  ).join('\n');

interface Turn {
  message: string;
  requestId: string;
  conversationId: string;
}

describe('fault injection: the API, the worker, Temporal and the database killed one at a time', () => {
  let stack: FaultStack | undefined;
  before(async function () {
    this.timeout(300_000);
    stack = await startFaultStack('faults');
    // the worker bundles the workflows while the API starts
    stack.startWorker();
    await stack.startApi();
  });
  after(async function () {
    this.timeout(120_000);
    await stack?.close();
  });

  it('loses nothing accepted, ends every run, and answers 503 with the error body while a dependency is down', async function () {
    this.timeout(900_000);
    const faults = stack!;
    const { env } = faults;
    const org = await createTestOrg(env, 'Fault Org');
    const owner = as(env, org.owner.token);
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    env.llm.on({ model }, (body) => {
      const chunks = replyChunks(userText(body));
      return { content: chunks.join(''), chunks, chunkDelayMs: 150 };
    });
    // The webhook's handler is a one-step chain whose model call takes a while.
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        instructions: 'Handle {{input.text}}',
        outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    ]);
    chain.answer({ content: '{"ok": true}', delayMs: 1500 });
    const webhookId = (await owner.post(org.path('/webhooks'), { name: 'Faults' }).expect(201)).body
      .webhookId as string;
    await owner
      .post(org.path(`/webhooks/${webhookId}/handlers`), {
        handlerType: 'action-chain',
        actionChainId: chain.chainId,
        instructions: 'Handle it',
      })
      .expect(201);
    const kb = await createKb(env, org);

    const turns: Turn[] = [];
    const files: string[] = [];
    const events: string[] = [];
    const postTurn = (message: string, requestId = `req-${message}`) =>
      owner.post(org.path('/conversations'), { agentId, message, requestId });
    const deliver = (event: string) =>
      request(faults.url)
        .post(org.path(`/webhooks/${webhookId}/execute`))
        .set('Idempotency-Key', event)
        .send({ text: event });
    /** A turn that must be accepted (sent again with its requestId after a refusal), kept for the checks. */
    const acceptedTurn = async (message: string) => {
      const res = await postTurn(message).expect(201);
      turns.push({ message, requestId: res.body.requestId, conversationId: res.body.conversationId });
    };
    /** Turns, an ingestion and a webhook delivery, each accepted. */
    const submitWork = async (tag: string) => {
      for (const i of [1, 2]) await acceptedTurn(`${tag}-${i}`);
      files.push((await uploadFile(env, org, kb, `${tag}.txt`, document(tag))).fileId);
      await deliver(tag).expect(200, {});
      events.push(tag);
    };
    /** Until a model call for this batch's turns has begun: the kill lands in the middle of work. */
    const inFlight = (tag: string) =>
      eventually(() => env.llm.chatRequests.some((r) => userText(r).startsWith(`${tag}-`)), 120_000);
    /** The answer while a dependency is down: 503, the error body, Retry-After. */
    const expectUnavailable = (res: request.Response) => {
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('service_unavailable');
      expect(res.body.error.message).to.be.a('string').and.not.equal('');
      expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
    };
    const healthy = () => eventually(async () => (await faults.health())?.status === 200, 120_000);

    // 1. The API: what it accepted runs on in the worker; the new API process serves it.
    await submitWork('api');
    await faults.killApi();
    await faults.startApi();
    await healthy();

    // 2. The worker, in the middle of turns: work accepted meanwhile waits for the next worker.
    await submitWork('worker');
    await inFlight('worker');
    await faults.killWorker();
    await submitWork('no-worker');
    faults.startWorker();

    // 3. Temporal. A turn refused while it is down is sent again, with the same requestId, once it is back.
    await submitWork('temporal');
    await inFlight('temporal');
    await faults.kill('temporal');
    expectUnavailable(await postTurn('refused-temporal'));
    expectUnavailable(await deliver('refused-temporal'));
    const temporalDown = await faults.health();
    expect(temporalDown?.status).to.equal(503);
    expect(temporalDown?.body.failing).to.deep.equal(['temporal']);
    // what needs only the database still answers
    await owner.get(org.path()).expect(200);
    await faults.restart('temporal');
    await healthy();
    await acceptedTurn('refused-temporal');
    await deliver('refused-temporal').expect(200, {});
    events.push('refused-temporal');

    // 3b. Temporal frozen (SIGSTOP: its sockets stay open and nothing answers): a call that needs it fails at
    // its deadline (TEMPORAL_RPC_TIMEOUT_MS) with a 503 instead of holding the request; the rest answers.
    await submitWork('frozen-temporal');
    faults.freeze('temporal');
    try {
      expectUnavailable(await postTurn('refused-frozen-temporal'));
      await owner.get(org.path()).expect(200);
    } finally {
      faults.thaw('temporal');
    }
    await healthy();
    // The refused turn, sent again: its start may have reached Temporal after all, and still runs once.
    await acceptedTurn('refused-frozen-temporal');

    // 4. The database.
    await submitWork('database');
    await inFlight('database');
    await faults.kill('mongo-h2');
    expectUnavailable(await owner.get(org.path()));
    expectUnavailable(await postTurn('refused-database'));
    expectUnavailable(await deliver('refused-database'));
    const dbDown = await faults.health();
    expect(dbDown?.status).to.equal(503);
    expect(dbDown?.body.failing).to.deep.equal(['mongo']);
    await faults.restart('mongo-h2');
    // Neither the API nor the worker is restarted: both reconnect by themselves.
    await healthy();

    // 4b. The database frozen: a read that needs it fails at its deadline (DB_SOCKET_TIMEOUT_MS) with a 503.
    await submitWork('frozen-database');
    faults.freeze('mongo-h2');
    try {
      expectUnavailable(await owner.get(org.path()));
    } finally {
      faults.thaw('mongo-h2');
    }
    await healthy();
    await submitWork('after');

    // Every accepted turn has exactly one assistant reply, the whole scripted answer.
    for (const turn of turns) {
      const messages = await eventually(async () => {
        const res = await owner.get(org.path(`/conversations/${turn.conversationId}`)).expect(200);
        const all = res.body.messages as Array<{
          role: string;
          status: string;
          requestId: string;
          content: Array<{ text: string }>;
        }>;
        return all.some((m) => m.role === 'assistant' && m.status !== 'streaming') && all;
      }, 300_000);
      const replies = messages.filter((m) => m.role === 'assistant');
      expect(replies, turn.message).to.have.length(1);
      expect(replies[0]!.status, turn.message).to.equal('complete');
      expect(replies[0]!.content.map((c) => c.text).join(''), turn.message).to.equal(
        replyChunks(turn.message).join(''),
      );
    }
    // Every file accepted is READY.
    for (const fileId of files) {
      const file = await settled(env, org, kb, fileId, 300_000);
      expect(file.status, `${fileId}: ${file.statusMessage}`).to.equal('READY');
    }
    // Every delivery was dispatched once, and its handler's chain ran exactly once, to success.
    const deliveries = await eventually(async () => {
      const res = await owner.get(org.path(`/webhooks/${webhookId}/deliveries?limit=100`)).expect(200);
      const items = res.body.items as Array<{ eventId: string; status: string; handlers: number }>;
      return items.length === events.length && items.every((d) => d.status === 'dispatched') && items;
    }, 300_000);
    expect(deliveries.map((d) => d.eventId).sort()).to.deep.equal([...events].sort());
    expect(deliveries.every((d) => d.handlers === 1)).to.equal(true);
    const runs = await eventually(async () => {
      const res = await owner.get(org.path(`/chains/${chain.chainId}/runs?limit=100`)).expect(200);
      const items = res.body.items as Array<{
        status: string;
        statusMessage: string | null;
        state: { input: { text: string } };
      }>;
      const ended = items.every((r) => r.status === 'success' || r.status === 'failed');
      return ended && items.length >= events.length && items;
    }, 300_000);
    expect(runs.map((r) => r.state.input.text).sort()).to.deep.equal([...events].sort());
    for (const run of runs)
      expect(run.status, `${run.state.input.text}: ${run.statusMessage}`).to.equal('success');

    // Every run ended: nothing is left running on the stack's task queues (background and interactive).
    const queue = env.config.temporal.taskQueue;
    await eventually(async () => {
      const { count } = await env.deps.temporal.client.workflow.count(
        `TaskQueue IN ('${queue}', '${interactiveTaskQueue(queue)}') AND ExecutionStatus = 'Running'`,
      );
      return count === 0;
    }, 300_000);
  });
});
