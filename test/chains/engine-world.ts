/* eslint-disable @typescript-eslint/require-await -- the stand-ins are async like the repositories and services they replace */
import type OpenAI from 'openai';
import type { ChainStepInput } from '@contracts';
import { StepBilling } from '@lib/chains/engine/billing';
import type { ChainEngineDeps } from '@lib/chains/engine/deps';
import type { Attempt } from '@lib/chains/engine/attempt';
import type { RunStore } from '@lib/chains/engine/run-store';
import { StepRunner } from '@lib/chains/engine/step-runner';
import { WriteBehindRunStore } from '@lib/chains/engine/write-behind-run-store';
import { copy, FakeRuns } from './fake-runs';
import { InsufficientCreditsError } from '@lib/errors';

/*
 * The chain-step engine over in-memory stand-ins: runs, elements, chains, steps and attachments of one
 * organization, a scripted model answering the chat-completions shape, and a credits account. The stand-ins follow
 * the documented contract of the real ones (ChainRunsRepository: writes apply only to the run's current generation
 * and, with a stateVersion, only at that version, which every recordStep increments; lean reads are copies),
 * not the production code.
 */

export const ORG = 'org_1';
export const CHAIN = 'chn_1';

/** One organization's chains store, as the world holds it (cast to ChainsStore where the engine takes it). */
export interface ChainStore {
  chains: object;
  chainRuns: FakeRuns;
  chainAttachments: { listForChain(actionChainId: string): Promise<Array<{ stepId: string }>> };
}

export interface Step {
  _id: string;
  actionChainId: string;
  stepOrder: number;
  name: string;
  description?: string;
  instructions: string;
  reasoning?: string;
  enabled?: boolean;
  outputSchemaJson?: string | null;
  showWholeChainState?: boolean;
  forEachElement?: string | null;
  toolChoice?: string | null;
  runIf?: string | null;
  failBeforeRunningIf?: string | null;
  failAfterRunningIf?: string | null;
}

/** A step of chain CHAIN with the schema's defaults. */
export const step = (stepOrder: number, fields: Partial<Step> = {}): Step => ({
  _id: `stp_${stepOrder}`,
  actionChainId: CHAIN,
  stepOrder,
  name: `s${stepOrder}`,
  description: '',
  instructions: `do ${stepOrder}`,
  reasoning: 'none',
  enabled: true,
  outputSchemaJson: null,
  showWholeChainState: false,
  forEachElement: null,
  toolChoice: null,
  runIf: null,
  failBeforeRunningIf: null,
  failAfterRunningIf: null,
  ...fields,
});

/** An object schema with string properties `names`, all required. */
export const schemaOf = (...names: string[]) =>
  JSON.stringify({
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string' }])),
    required: names,
  });

export interface Reply {
  content?: string | null;
  /** a call's `type` is 'function' unless given (the API also has 'custom' tools) */
  toolCalls?: Array<{ id: string; name: string; arguments: string; type?: string }>;
  finishReason?: string;
  /** a completion without any choice */
  noChoice?: boolean;
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  model?: string;
  error?: Error;
}

/** A model that answers the chat-completions shape from a script, and keeps each request. */
export class ScriptedModel {
  requests: Array<Record<string, unknown>> = [];
  /** the abort signal each request was made with */
  signals: Array<AbortSignal | undefined> = [];
  constructor(public script: Reply[] = []) {}

  client() {
    const create = async (body: Record<string, unknown>, options?: { signal?: AbortSignal }) => {
      this.requests.push(copy(body));
      this.signals.push(options?.signal);
      const reply = this.script.shift();
      if (!reply) throw new Error('the scripted model has no answer left');
      if (reply.error) throw reply.error;
      return {
        model: reply.model ?? 'gpt-test',
        usage:
          reply.usage === null ? undefined : (reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 }),
        choices: reply.noChoice
          ? []
          : [
              {
                finish_reason: reply.finishReason ?? 'stop',
                message: {
                  content: reply.content ?? null,
                  tool_calls: reply.toolCalls?.map((c) => ({
                    id: c.id,
                    type: c.type ?? 'function',
                    function: { name: c.name, arguments: c.arguments },
                  })),
                },
              },
            ],
      };
    };
    return { chat: { completions: { create } } } as unknown as OpenAI;
  }
}

/** An organization's credits: requireCredits refuses a balance at or below zero; each call costs one. */
export class FakeCredits {
  usage: Array<{ model: string; prompt: number; completion: number; reference: string }> = [];
  reads = 0;
  purposes: string[] = [];
  /** a payment lands only after the I/O callbacks queued before it (as a real round trip would) */
  slowPayments = false;
  constructor(public balanceNow = 100) {}

  async balance() {
    return this.balanceNow;
  }
  async requireCredits(organizationId: string) {
    this.reads++;
    if (this.balanceNow <= 0) throw new InsufficientCreditsError(organizationId, this.balanceNow);
  }
  async recordUsage(
    _org: string,
    call: {
      purpose: string;
      model: string;
      usage: { prompt_tokens: number; completion_tokens: number };
      reference?: string;
    },
  ) {
    this.purposes.push(call.purpose);
    if (this.slowPayments) await new Promise((resolve) => setImmediate(resolve));
    this.usage.push({
      model: call.model,
      prompt: call.usage.prompt_tokens,
      completion: call.usage.completion_tokens,
      reference: call.reference ?? '',
    });
    this.balanceNow -= 1;
    return { balance: this.balanceNow };
  }
}

export interface Logged {
  level: string;
  msg: string;
}

/** What the engine ended a run's browser sessions for (runSessions.endFor). */
export interface EndedOwner {
  type: string;
  actionChainId?: string;
  runId: string;
}

/** The whole world: one chain, its steps and one run `run_1` at generation 1. */
export function engineWorld(
  steps: Step[],
  opts: { state?: object; replies?: Reply[]; balance?: number } = {},
) {
  const runs = new FakeRuns();
  runs.runs.set('run_1', {
    _id: 'run_1',
    actionChainId: CHAIN,
    status: 'pending',
    statusMessage: null,
    stateJson: JSON.stringify(opts.state ?? { input: { message: 'hi' } }),
    generation: 1,
    stepResults: {},
    stateVersion: 0,
    startedByUserId: 'usr_1',
  });
  const chainSteps = new Map(steps.map((s) => [s._id, s]));
  const chains = {
    get: async (id: string) =>
      id === CHAIN ? { _id: CHAIN, name: 'Triage', llmInstructions: 'Be brief.' } : null,
    listSteps: async (id: string) =>
      id === CHAIN ? [...chainSteps.values()].sort((a, b) => a.stepOrder - b.stepOrder).map(copy) : [],
    getStep: async (id: string, stepId: string) => {
      const s = chainSteps.get(stepId);
      return s && s.actionChainId === id ? copy(s) : null;
    },
  };
  const tenant: ChainStore = {
    chains,
    chainRuns: runs,
    chainAttachments: { listForChain: async () => [] as Array<{ stepId: string }> },
  };
  const model = new ScriptedModel(opts.replies);
  const credits = new FakeCredits(opts.balance);
  runs.paidAtFinish = () => credits.usage.length;
  const logged: Logged[] = [];
  /** the fields of each log line, in the order of `logged` */
  const logFields: Array<Record<string, unknown>> = [];
  const log = (level: string) => (obj: Record<string, unknown>, msg: string) => {
    logFields.push(obj);
    logged.push({ level, msg });
  };
  const ended: string[] = [];
  const endedOwners: EndedOwner[] = [];
  const deps = {
    repos: { tenant: (org: string) => (org === ORG ? tenant : undefined) },
    llm: model.client(),
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    chains: { model: 'gpt-test', fanOutBatch: 250, fanOutConcurrency: 8, fanOutMax: 3, stateMaxBytes: 4000 },
    credits,
    runSessions: {
      endFor: async (_org: string, o: EndedOwner) => {
        ended.push(o.runId);
        endedOwners.push({ ...o });
      },
    },
  } as unknown as ChainEngineDeps;
  return { runs, chainSteps, model, credits, logged, logFields, ended, endedOwners, tenant, deps };
}

export type World = ReturnType<typeof engineWorld>;

/** A StepRunner over the world, with the worker's write-behind store unless given another. */
export function runnerOf(world: World, store?: RunStore) {
  return new StepRunner(
    world.deps,
    store ?? new WriteBehindRunStore({ repos: world.deps.repos, logger: world.deps.logger }),
    new StepBilling(world.deps),
  );
}

export const attempt = (retried = false): Attempt => ({ retried, heartbeat: () => undefined });

/** The input of step `stepOrder` of run_1's first execution. */
export const stepInput = (stepOrder: number, fields: Partial<ChainStepInput> = {}): ChainStepInput => ({
  organizationId: ORG,
  runId: 'run_1',
  generation: 1,
  actionChainId: CHAIN,
  stepId: `stp_${stepOrder}`,
  ...fields,
});

/** The run's stored state. */
export const stateOf = (world: World) =>
  JSON.parse(world.runs.runs.get('run_1')!.stateJson) as Record<string, unknown>;
