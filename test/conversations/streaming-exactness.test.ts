import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestAgent } from '@test/helpers/agents';
import { createRunnableChain, finished, startRun, userText } from '@test/helpers/chains';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { lastUserText } from '@test/helpers/llm';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { connectClient, type ReceivedEvent } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';
import { childProcessEnv, spawnEntry } from '@test/helpers/worker-process';

// docs/agents.md, "Assembling the reply from deltas": under load, for every turn, the deltas of its last round
// (latest attempt, in seq order) are exactly the stored reply and the model's text, each delta once and in order,
// with one final event after them, and one callback. The API runs in this process and two worker processes share
// the turns, so a turn's events travel over more than one Redis connection; one round kills a worker mid-stream.

/** 50 turns at once, spread over organizations so none passes MAX_CONCURRENT_TURNS_PER_ORG (20). */
const TURNS_PER_ORG = [20, 20, 10];

/**
 * What the model writes before calling a tool (round 0: 7, 14 or 21 chunks) and its final reply (round 1: 4 to 40
 * chunks, so some are shorter than the text before them, whose seqs they must not be mixed with).
 */
const introOf = (question: string) =>
  `Looking that up for ${question}, one moment. `.repeat(1 + (question.length % 3));
const replyOf = (question: string) => {
  const n = Number(question.split('-').pop());
  return Array.from({ length: 4 + ((n * 7) % 37) }, (_, i) => `${question}:${i}${i % 7 === 0 ? '\n' : ' '}`);
};

interface Turn {
  org: Org;
  question: string;
  requestId: string;
  conversationId: string;
}

interface Org {
  org: TestOrg;
  agentId: string;
  model: string;
  client: Awaited<ReturnType<typeof connectClient>>;
}

/** The text of one round as the doc says to build it: the latest attempt's deltas, by seq; each seq once. */
function roundText(deltas: ReceivedEvent[], round: number) {
  const ofRound = deltas.filter((e) => e.payload.round === round);
  const attempt = Math.max(...ofRound.map((e) => Number(e.payload.attempt)));
  const latest = ofRound.filter((e) => e.payload.attempt === attempt);
  const seqs = latest.map((e) => Number(e.payload.seq));
  return { text: latest.map((e) => String(e.payload.text)).join(''), seqs };
}

/** A worker process configured like the test env (whose callbacks may reach this loopback receiver). */
const startWorker = (env: TestEnv) =>
  spawnEntry('worker/main.ts', { ...childProcessEnv(env), ALLOW_PRIVATE_OUTBOUND: 'true' });

describe('streamed text is exact under load: 50 turns at once, two workers', () => {
  let env: TestEnv;
  const workers: ChildProcess[] = [];
  const orgs: Org[] = [];
  let callbacks: Server;
  const callbacksOf = new Map<string, number>();
  let callbackUrl: string;

  before(async function () {
    this.timeout(180_000);
    env = await testEnv();
    callbacks = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const { requestId } = JSON.parse(raw) as { requestId: string };
        callbacksOf.set(requestId, (callbacksOf.get(requestId) ?? 0) + 1);
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => callbacks.listen(0, '127.0.0.1', resolve));
    callbackUrl = `http://127.0.0.1:${(callbacks.address() as AddressInfo).port}/turns`;
    for (const [i] of TURNS_PER_ORG.entries()) {
      const org = await createTestOrg(env, `Exact Org ${i}`);
      const { agentId, model } = await createTestAgent(env, org.organizationId);
      await as(env, org.admin.token)
        .post(org.path(`/agents/${agentId}/tools`), { toolCode: 'current_time', configuration: {} })
        .expect(201);
      orgs.push({
        org,
        agentId,
        model,
        client: await connectClient(env, org.organizationId, org.owner.token),
      });
    }
    workers.push(startWorker(env), startWorker(env));
  });

  // The scripted model forgets its rules after each test.
  beforeEach(() => {
    for (const { model } of orgs)
      // Round 0: some text, then a tool call; round 1 (the tool's result is in): the long reply.
      env.llm.on({ model }, (body) => {
        const question = lastUserText(body);
        if (!body.messages.some((m) => m.role === 'tool'))
          return {
            content: introOf(question),
            toolCalls: [{ name: 'current_time', arguments: {} }],
            chunkDelayMs: 10,
          };
        const chunks = replyOf(question);
        return { content: chunks.join(''), chunks, chunkDelayMs: 25 };
      });
  });

  after(async () => {
    for (const o of orgs) o.client.close();
    for (const w of workers) w.kill('SIGKILL');
    await new Promise((resolve) => callbacks?.close(resolve));
  });

  /** Starts 50 turns at once; resolves once every one has its final event. */
  async function round(tag: string, whileRunning?: (turns: Turn[]) => Promise<void>) {
    const turns = await Promise.all(
      orgs.flatMap((o, i) =>
        Array.from({ length: TURNS_PER_ORG[i]! }, async (_, n) => {
          const question = `${tag}-${i}-${n}`;
          const res = await as(env, o.org.owner.token)
            .post(o.org.path('/conversations'), { agentId: o.agentId, message: question, callbackUrl })
            .expect(201);
          return { org: o, question, requestId: res.body.requestId, conversationId: res.body.conversationId };
        }),
      ),
    );
    await whileRunning?.(turns);
    for (const t of turns)
      await eventually(
        () =>
          t.org.client.turn(t.requestId).some((e) => ['message', 'error'].includes(String(e.payload.type))),
        180_000,
      );
    return turns;
  }

  async function expectExact(turns: Turn[]) {
    for (const t of turns) {
      const events = t.org.client.turn(t.requestId).filter((e) => e.event === 'conversation');
      const finals = events.filter((e) => e.payload.type === 'message' || e.payload.type === 'error');
      expect(
        finals.map((e) => e.payload.type),
        t.question,
      ).to.deep.equal(['message']);
      const deltas = events.filter((e) => e.payload.type === 'delta');
      const scripted = replyOf(t.question);
      // the last round: exactly the model's text, each seq once, in order, all before the final event
      const last = roundText(deltas, 1);
      expect(last.text, t.question).to.equal(scripted.join(''));
      expect(last.seqs, t.question).to.deep.equal(scripted.map((_, i) => i));
      const finalAt = events.indexOf(finals[0]!);
      const lastRoundAfterFinal = events.slice(finalAt).filter((e) => e.payload.round === 1);
      expect(lastRoundAfterFinal, t.question).to.have.length(0);
      // the text before the tool call streamed exactly once too
      expect(roundText(deltas, 0).text, t.question).to.equal(introOf(t.question));
      const message = finals[0]!.payload.message as { content: Array<{ text: string }> };
      expect(message.content[0]!.text, t.question).to.equal(scripted.join(''));
      // stored: one reply, the model's text
      const stored = await as(env, t.org.org.owner.token)
        .get(t.org.org.path(`/conversations/${t.conversationId}?messagesLimit=500`))
        .expect(200);
      const replies = (
        stored.body.messages as Array<{ role: string; content: Array<{ text: string }> }>
      ).filter((m) => m.role === 'assistant');
      expect(
        replies.map((m) => m.content[0]!.text),
        t.question,
      ).to.deep.equal([scripted.join('')]);
    }
    // one callback per turn (the last may still be on its way when the final event is out)
    await eventually(() => turns.every((t) => callbacksOf.has(t.requestId)), 60_000);
    expect(turns.filter((t) => callbacksOf.get(t.requestId) !== 1).map((t) => t.question)).to.deep.equal([]);
  }

  it('every turn: its deltas are the stored reply and the model text, once each, before one final event', async function () {
    this.timeout(600_000);
    for (const tag of ['a', 'b']) await expectExact(await round(tag));
  });

  it('the same with a worker killed while the turns stream (their calls are retried elsewhere)', async function () {
    this.timeout(600_000);
    const turns = await round('k', async (started) => {
      // once several turns are in their long reply, the first worker dies and a new one joins
      await eventually(
        () =>
          started.filter((t) => t.org.client.turn(t.requestId).some((e) => e.payload.round === 1)).length >=
          10,
        180_000,
      );
      workers[0]!.kill('SIGKILL');
      workers.push(startWorker(env));
    });
    await expectExact(turns);
    const retried = turns.filter((t) =>
      t.org.client.turn(t.requestId).some((e) => e.payload.type === 'delta' && Number(e.payload.attempt) > 1),
    );
    // the kill did land mid-stream: some turns' model calls ran again on another worker
    expect(retried.length).to.be.greaterThan(0);
  });

  it("50 chain runs at once, a worker killed mid-way: each step ran to one stored result, the model's answer", async function () {
    this.timeout(600_000);
    const { org } = orgs[0]!;
    const out = (name: string) => ({
      type: 'object',
      properties: { [name]: { type: 'string' } },
      required: [name],
    });
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, instructions: 'one {{input.tag}}', outputSchema: out('a') },
      { stepOrder: 2, instructions: 'two {{input.tag}} {{a}}', outputSchema: out('b') },
      { stepOrder: 3, instructions: 'three {{input.tag}} {{b}}', outputSchema: out('c') },
    ]);
    // Each answer names its step and run, after a pause that keeps runs in flight when the worker dies.
    chain.answer(async (body) => {
      const [step, tag] = userText(body).split(' ');
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { content: JSON.stringify({ [{ one: 'a', two: 'b', three: 'c' }[step!]!]: `${step}:${tag}` }) };
    });
    const tags = Array.from({ length: 50 }, (_, i) => `r${i}`);
    const runs = await Promise.all(
      tags.map((tag) => startRun(env, org, chain.chainId, { payload: { tag } })),
    );
    await eventually(() => chain.calls().length >= 40, 180_000);
    workers.find((w) => w.exitCode === null && !w.killed)!.kill('SIGKILL');
    workers.push(startWorker(env));
    for (const [i, { runId }] of runs.entries()) {
      const run = await finished(env, org, chain.chainId, runId, 300_000);
      const tag = tags[i]!;
      expect(run.status, run.statusMessage ?? tag).to.equal('success');
      expect(run.state, tag).to.deep.equal({
        input: { tag },
        a: `one:${tag}`,
        b: `two:${tag}`,
        c: `three:${tag}`,
      });
      expect(
        run.steps.map((st) => st.outcome),
        tag,
      ).to.deep.equal(['success', 'success', 'success']);
    }
  });
});
