import { expect } from 'chai';
import type { TestEnv } from './env';
import type { ChatRequest, ScriptedReply } from './llm';
import { as, type TestOrg } from './org';
import { eventually } from './wait';

export interface Run {
  runId: string;
  status: string;
  statusMessage: string | null;
  generation: number;
  state: Record<string, unknown>;
  steps: Array<{ stepOrder: number; outcome: string; detail: string | null; modelCalls: number }>;
  startedAt: string | null;
  finishedAt: string | null;
}

/** A JSON schema of an object with these properties, all required unless `required` says otherwise. */
export const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
});
export const str = { type: 'string' };

/** The system message of a chat request: a chain step's is its chain's llmInstructions. */
export const systemText = (body: ChatRequest) => {
  const first = body.messages[0];
  return first?.role === 'system' && typeof first.content === 'string' ? first.content : '';
};

/** The last user message's text. */
export const userText = (body: ChatRequest) => {
  const last = [...body.messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
};

/** A chain whose llmInstructions carry a marker unique to the test, so the scripted model can answer it. */
export async function createRunnableChain(
  env: TestEnv,
  org: TestOrg,
  steps: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
) {
  const marker = `chain-${Math.random().toString(36).slice(2)}`;
  const res = await as(env, org.admin.token)
    .post(org.path('/chains'), {
      name: 'Chain',
      description: 'A test chain',
      llmInstructions: `You are ${marker}.`,
      steps,
      ...extra,
    })
    .expect(201);
  const chainId = res.body.actionChainId as string;
  return {
    chainId,
    marker,
    stepIds: (res.body.steps as Array<{ stepId: string }>).map((s) => s.stepId),
    /** Answers this chain's model calls. */
    answer: (reply: ScriptedReply) => env.llm.on((body) => systemText(body).includes(marker), reply),
    /** This chain's model calls so far. */
    calls: () => env.llm.chatRequests.filter((b) => systemText(b).includes(marker)),
  };
}

export async function startRun(env: TestEnv, org: TestOrg, chainId: string, body: object = {}, query = '') {
  const res = await as(env, org.chat.token)
    .post(org.path(`/chains/${chainId}/run${query}`), body)
    .expect(202);
  return res.body as { runId: string; messageId: string };
}

export async function getRun(env: TestEnv, org: TestOrg, chainId: string, runId: string): Promise<Run> {
  const res = await as(env, org.chat.token)
    .get(org.path(`/chains/${chainId}/runs/${runId}`))
    .expect(200);
  return res.body as Run;
}

/** Waits for the run's current execution to end. */
export async function finished(
  env: TestEnv,
  org: TestOrg,
  chainId: string,
  runId: string,
  timeoutMs = 60_000,
) {
  return eventually(async () => {
    const run = await getRun(env, org, chainId, runId);
    return run.status === 'success' || run.status === 'failed' ? run : undefined;
  }, timeoutMs);
}

export async function runToEnd(env: TestEnv, org: TestOrg, chainId: string, payload: object = {}) {
  const { runId } = await startRun(env, org, chainId, { payload });
  const run = await finished(env, org, chainId, runId);
  expect(run.runId).to.equal(runId);
  return run;
}

/** The scripted model's part in examples/chains.ts (a support triage): a category, then a reply. */
export function answerSupportTriage(env: TestEnv) {
  return env.llm.on(
    (body) => systemText(body).includes('You work in customer support'),
    (body) => ({
      content: JSON.stringify(
        userText(body).startsWith('Classify')
          ? { category: 'billing' }
          : { reply: 'We will correct the invoice.' },
      ),
    }),
  );
}
