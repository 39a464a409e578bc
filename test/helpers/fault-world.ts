import { expect } from 'chai';
import request from 'supertest';
import { interactiveTaskQueue } from '@lib/temporal/client';
import { createTestAgent } from './agents';
import { createRunnableChain, userText } from './chains';
import type { FaultStack } from './fault-stack';
import { createKb, settled } from './kb';
import { as, createTestOrg } from './org';
import { eventually } from './wait';

// What the fault tests (a dependency killed, or frozen) submit and then check: every piece of work the API
// accepted ends exactly once, whole. One organization with an agent whose replies stream, a one-step chain run
// directly and as a webhook's handler, and a knowledge base taking uploads.

/** What a scripted turn answers to `message`: streamed in 12 chunks, 150 ms apart, so turns are in flight. */
export const replyChunks = (message: string) => Array.from({ length: 12 }, (_, i) => `${message}/${i} `);

/** About 80 chunks of text: a few seconds of embedding work in the worker. */
export const document = (tag: string) =>
  Array.from(
    { length: 400 },
    (_, i) => `Record ${i} of ${tag}: the reading on meter ${i * 7} was ${i * 13} units on day ${i % 28}.`,
  ).join('\n');

export interface Turn {
  message: string;
  conversationId: string;
}

/** The API's answer while a dependency it needs is down or frozen: 503, the error body, Retry-After. */
export function expectUnavailable(res: request.Response) {
  expect(res.status, JSON.stringify(res.body)).to.equal(503);
  expect(res.body.error.code).to.equal('service_unavailable');
  expect(res.body.error.message).to.be.a('string').and.not.equal('');
  expect(Number(res.headers['retry-after'])).to.be.greaterThan(0);
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every item of a list, page by page (`{ items, totalRows }`, paged by `cursor`). */
async function allItems<T>(get: (path: string) => request.Test, path: string): Promise<T[]> {
  const items: T[] = [];
  for (;;) {
    const res = await get(`${path}?limit=100&cursor=${items.length}`).expect(200);
    items.push(...(res.body.items as T[]));
    if (!res.body.items.length || items.length >= res.body.totalRows) return items;
  }
}

/** Statuses that mean "not now, nothing accepted": sent again after a pause. */
const refusal = (res: request.Response) => {
  if (res.status === 503) expectUnavailable(res);
  return res.status === 503 || res.status === 429;
};

export async function faultWorld(faults: FaultStack) {
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
      instructions: 'Handle [{{input.text}}]',
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
  const kbId = await createKb(env, org);

  /** What the API accepted, to be checked at the end; and the chain runs it refused. */
  const accepted = {
    turns: [] as Turn[],
    files: [] as string[],
    events: [] as string[],
    runs: [] as string[],
  };
  const refusedRuns: string[] = [];

  const postTurn = (message: string) =>
    owner.post(org.path('/conversations'), { agentId, message, requestId: `req-${message}` });
  const deliver = (event: string) =>
    request(faults.url)
      .post(org.path(`/webhooks/${webhookId}/execute`))
      .set('Idempotency-Key', event)
      .send({ text: event });

  /** Set once the test has failed: submissions stop sending again. */
  let abandoned = false;
  const again = async () => {
    if (abandoned) throw new Error('the test ended before this submission was accepted');
    await pause(1000);
  };

  /** Sends a request until it is accepted: the same requestId / Idempotency-Key after a refusal, and after no
   * answer at all (the API process down). Any other answer fails the test. */
  const untilAccepted = async (send: () => request.Test, expected: number) => {
    for (;;) {
      const res = await send().catch(() => null);
      if (res && !refusal(res)) {
        expect(res.status, JSON.stringify(res.body)).to.equal(expected);
        return res;
      }
      await again();
    }
  };

  const submit = {
    async turn(message: string) {
      const res = await untilAccepted(() => postTurn(message), 201);
      accepted.turns.push({ message, conversationId: res.body.conversationId });
    },
    async delivery(event: string) {
      await untilAccepted(() => deliver(event), 200);
      accepted.events.push(event);
    },
    /** A chain run has no idempotency key: one refused is not sent again, and must never run. */
    async chainRun(text: string) {
      const res = await owner.post(org.path(`/chains/${chain.chainId}/run`), { payload: { text } });
      if (refusal(res)) return void refusedRuns.push(text);
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      accepted.runs.push(text);
    },
    /** upload-url, then the PUT to the object store, sent again (as a client would) until it lands. */
    async upload(tag: string) {
      const res = await untilAccepted(
        () =>
          as(env, org.admin.token).post(org.path(`/knowledgebases/${kbId}/files/upload-url`), {
            fileName: `${tag}.txt`,
            contentType: 'text/plain',
          }),
        201,
      );
      for (;;) {
        const put = await fetch(res.body.uploadUrl as string, {
          method: 'PUT',
          headers: { 'Content-Type': 'text/plain' },
          body: document(tag),
          signal: AbortSignal.timeout(20_000),
        }).catch(() => null);
        if (put?.status === 200) break;
        await again();
      }
      accepted.files.push(res.body.fileId as string);
    },
  };

  /** Every accepted turn, file, delivery and chain run ended exactly once, whole; refused runs never ran. */
  async function expectEachOnce() {
    for (const turn of accepted.turns) {
      const messages = await eventually(async () => {
        const res = await owner.get(org.path(`/conversations/${turn.conversationId}`)).expect(200);
        const all = res.body.messages as Array<{
          role: string;
          status: string;
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
    for (const fileId of accepted.files) {
      const file = await settled(env, org, kbId, fileId, 300_000);
      expect(file.status, `${fileId}: ${file.statusMessage}`).to.equal('READY');
    }
    // Every delivery was dispatched once, and its handler's chain ran exactly once, to success.
    const deliveries = await eventually(async () => {
      const items = await allItems<{ eventId: string; status: string; handlers: number }>(
        owner.get,
        org.path(`/webhooks/${webhookId}/deliveries`),
      );
      return (
        items.length === accepted.events.length && items.every((d) => d.status === 'dispatched') && items
      );
    }, 300_000);
    expect(deliveries.map((d) => d.eventId).sort()).to.deep.equal([...accepted.events].sort());
    expect(deliveries.every((d) => d.handlers === 1)).to.equal(true);
    type Run = { status: string; statusMessage: string | null; state: { input: { text: string } } };
    const runs = await eventually(async () => {
      const items = await allItems<Run>(owner.get, org.path(`/chains/${chain.chainId}/runs`));
      const ended = items.every((r) => r.status === 'success' || r.status === 'failed');
      return ended && items.length >= accepted.events.length + accepted.runs.length && items;
    }, 300_000);
    const runsOf = (text: string) => runs.filter((r) => r.state.input.text === text);
    const asked = chain.calls().map(userText).join('\n');
    for (const text of [...accepted.events, ...accepted.runs]) {
      expect(runsOf(text), text).to.have.length(1);
      expect(asked, text).to.include(`[${text}]`);
      expect(runsOf(text)[0]!.status, `${text}: ${runsOf(text)[0]!.statusMessage}`).to.equal('success');
    }
    // A refused run was never created, or was marked failed; its step never asked the model.
    for (const text of refusedRuns) {
      expect(runsOf(text).length, text).to.be.at.most(1);
      expect(
        runsOf(text).every((r) => r.status === 'failed'),
        text,
      ).to.equal(true);
      expect(asked, text).not.to.include(`[${text}]`);
    }
    expect(runs, 'no run but those sent').to.have.length(
      accepted.events.length + accepted.runs.length + refusedRuns.filter((t) => runsOf(t).length).length,
    );

    // Nothing is left running on the stack's task queues (background and interactive).
    const queue = env.config.temporal.taskQueue;
    await eventually(async () => {
      const { count } = await env.deps.temporal.client.workflow.count(
        `TaskQueue IN ('${queue}', '${interactiveTaskQueue(queue)}') AND ExecutionStatus = 'Running'`,
      );
      return count === 0;
    }, 300_000);
  }

  return {
    env,
    org,
    owner,
    agentId,
    postTurn,
    deliver,
    submit,
    accepted,
    refusedRuns,
    expectEachOnce,
    /** Stops every submission still sending again (after a failure). */
    abandon: () => void (abandoned = true),
  };
}

export type FaultWorld = Awaited<ReturnType<typeof faultWorld>>;
