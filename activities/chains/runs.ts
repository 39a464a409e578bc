import { BoundedMap } from '@lib/bounded-map';
import { endSessionsOf } from '@lib/browser-sessions/browser-sessions.service';
import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import {
  FAILURES,
  workflowIds,
  type AgentChainRunInput,
  type ChainElementInput,
  type ChainFanOutInput,
  type ChainRunInput,
  type ChainRunPlan,
  type ChainStepInput,
  type ChainStepOutcome,
  type ChatToolCall,
  type UnwrittenStep,
} from '@contracts';
import type { ChainDoc, StepDoc } from '@lib/chains/chain.schema';
import type { StepAttachmentDoc } from '@lib/chains/step-attachment.schema';
import { derivedRunId, type ChainRunsService } from '@lib/chains/chain-runs.service';
import { fanOutTooLarge } from '@lib/chains/fan-out-limit';
import { runPlan } from '@lib/chains/run-plan';
import { AppError, InsufficientCreditsError } from '@lib/errors';
import type { StepOutcome } from '@lib/chains/chain-run.schema';
import { guardHolds, renderTemplate, selectElements } from '@lib/chains/expressions';
import type { Config } from '@lib/config';
import type { CreditsService } from '@lib/credits/credits.service';
import type { Logger } from '@lib/logger';
import type { Repositories, TenantRepositories } from '@lib/repositories';
import {
  ExecutionCache,
  PendingPayments,
  PendingWrites,
  MAX_CACHED_STATE_CHARS,
  snapshotOf,
  stateVersionOf,
  type ExecutionSnapshot,
  type State,
} from './execution-cache';
import { answerStep, spentBefore, type StepAnswer } from './step-model';
import { loadStepTools, type StepRunRef, type StepToolDeps, type StepTools } from './step-tools';

export interface ChainActivityDeps extends StepToolDeps {
  repos: Repositories;
  llm: OpenAI;
  logger: Logger;
  chains: Config['chains'];
  runs: Pick<ChainRunsService, 'createRun'>;
  /** Model calls of steps are paid with the organization's credits. */
  credits: Pick<CreditsService, 'balance' | 'requireCredits' | 'recordUsage'>;
}

interface StepRun {
  tenant: TenantRepositories;
  chain: ChainDoc;
  step: StepDoc;
  attachments: StepAttachmentDoc[];
  runRef: StepRunRef;
  state: State;
  stepResult: { outcome: StepOutcome; generation: number } | undefined;
  /** the worker's copy of the execution this step run was read from */
  snapshot: ExecutionSnapshot;
}

const superseded = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.chainRunSuperseded);

/** A step whose new fields' JSON is longer waits for its result to be written: the history would carry them. */
export const MAX_UNWRITTEN_CHARS = 16 * 1024;

/** The worker's copy of an execution was outdated: the step is run again on the state read afresh. */
class StaleSnapshot extends Error {}

/** A retried attempt reads the run afresh: the attempt before it may have written it from another worker. */
const retried = () => Context.current().info.attempt > 1;
const failed = (detail: string): ChainStepOutcome => ({ kind: 'failed', detail });

/** The properties an output schema declares: all a step adds to the state (a model may answer more). */
function declaredFields(outputSchemaJson: string): string[] {
  return Object.keys((JSON.parse(outputSchemaJson) as { properties: object }).properties);
}

/** The chain state's fields a step's output adds: its declared output fields, or its text as `step<stepOrder>`. */
function outputFields(step: StepDoc, value: unknown): State {
  if (!step.outputSchemaJson) return { [`step${step.stepOrder}`]: value };
  const answer = value as State;
  return Object.fromEntries(
    declaredFields(step.outputSchemaJson)
      .filter((p) => p in answer)
      .map((p) => [p, answer[p]]),
  );
}

/** A chain, its steps and their attachments: what an execution's steps need, in one round of reads. */
function readDefinition(tenant: TenantRepositories, actionChainId: string) {
  return Promise.all([
    tenant.chains.get(actionChainId),
    tenant.chains.listSteps(actionChainId),
    tenant.chainAttachments.listForChain(actionChainId),
  ]);
}

/** Writes a step's success handed on (`unwritten`) with the new state, at the version the step read. */
function writeHandedOn(
  runs: TenantRepositories['chainRuns'],
  input: ChainRunInput,
  step: UnwrittenStep,
  stateJson: string,
) {
  return runs.recordStep(
    input.runId,
    input.generation,
    {
      stepId: step.stepId,
      stepOrder: step.stepOrder,
      name: step.name,
      outcome: 'success',
      detail: null,
      modelCalls: step.modelCalls,
      generation: input.generation,
      finishedAt: new Date(step.finishedAt),
    },
    stateJson,
    step.version,
  );
}

export function createChainActivities(deps: ChainActivityDeps) {
  const executions = new ExecutionCache();
  const pendingPayments = new PendingPayments();
  const pendingWrites = new PendingWrites();

  /**
   * Reads an execution's run, chain, steps and attachments (one round) and keeps them for its next steps. The
   * first step of a planned execution marks the run running in the same round (it is the run's read).
   */
  async function readExecution(input: ChainStepInput): Promise<ExecutionSnapshot> {
    const tenant = deps.repos.tenant(input.organizationId);
    // (An execution started before its input named the chain reads the chain after the run.)
    const [run, byInput] = await Promise.all([
      input.marksRunning
        ? tenant.chainRuns.markRunning(input.runId, input.generation)
        : tenant.chainRuns.get(input.runId),
      input.actionChainId ? readDefinition(tenant, input.actionChainId) : undefined,
    ]);
    if (!run) throw superseded(input.marksRunning ? 'the run was re-run or deleted' : 'the run was deleted');
    if (run.generation !== input.generation) throw superseded('the run was re-run');
    const [chain, steps, attachments] =
      input.actionChainId === run.actionChainId ? byInput! : await readDefinition(tenant, run.actionChainId);
    if (!chain) throw superseded('the chain was deleted');
    const snapshot = snapshotOf(run, chain, steps, attachments);
    executions.set(input, snapshot);
    return snapshot;
  }

  /** The worker's copy of an execution, unless this is a retried attempt (which reads afresh). */
  const cachedExecution = (input: ChainRunInput) => (retried() ? undefined : executions.get(input));

  /**
   * The execution's run, chain and step: from the worker's copy of the execution when there is one (see
   * ExecutionSnapshot), else read. A run re-run or deleted meanwhile stops the execution.
   */
  async function load(input: ChainStepInput, cached: ExecutionSnapshot | undefined): Promise<StepRun> {
    const snapshot = cached ?? (await readExecution(input));
    const step = snapshot.steps.get(input.stepId);
    if (!step) throw ApplicationFailure.nonRetryable('the step was deleted', FAILURES.chainStepFailed);
    return {
      tenant: deps.repos.tenant(input.organizationId),
      chain: snapshot.chain,
      step,
      attachments: snapshot.attachments.get(step._id) ?? [],
      runRef: snapshot.runRef,
      state: snapshot.state,
      stepResult: snapshot.stepResults[input.stepId],
      snapshot,
    };
  }

  // A fan-out step's elements share one state (it changes only when the step's outputs are collected): each
  // worker loads it once per step execution, not once per element.
  const fanOutContexts = new BoundedMap<string, Promise<StepRun & { tools: StepTools }>>(16);
  function fanOutContext(input: ChainElementInput) {
    const key = `${input.organizationId}:${input.runId}:${input.generation}:${input.stepId}`;
    let ctx = fanOutContexts.get(key);
    if (!ctx) {
      ctx = (async () => {
        const run = await load(input, cachedExecution(input));
        const scope = `${workflowIds.chainRun(input.organizationId, input.runId, input.generation)}-${input.stepId}`;
        return {
          ...run,
          tools: await loadStepTools(run.tenant, run.attachments, run.runRef, scope, deps),
        };
      })();
      ctx.catch(() => fanOutContexts.delete(key));
      fanOutContexts.set(key, ctx);
    }
    return ctx;
  }

  /**
   * Whether the organization may pay for a model call: started early, awaited just before the call. A positive
   * balance this worker's last payment for the execution left is taken as it is (no read), once that payment is
   * done (billLater); anything else is read.
   */
  function creditCheck(input: ChainRunInput, known?: ExecutionSnapshot): Promise<void> {
    const check = (async () => {
      if (known) await pendingPayments.settled(input);
      if (known?.balance !== undefined && known.balance > 0) return;
      try {
        await deps.credits.requireCredits(input.organizationId);
      } catch (err) {
        if (err instanceof InsufficientCreditsError)
          throw ApplicationFailure.nonRetryable(
            "the organization's credits are used up; an operator can grant more",
            FAILURES.chainStepFailed,
          );
        throw err;
      }
    })();
    check.catch(() => undefined); // a step that never asks the model never reads it
    return check;
  }

  /** Pays for a step's model calls; keeps the balance it leaves. */
  async function bill(input: ChainStepInput, usage: StepAnswer['usage'], snapshot?: ExecutionSnapshot) {
    for (const call of usage) {
      const { balance } = await deps.credits.recordUsage(input.organizationId, {
        purpose: 'chain-step',
        model: call.model,
        usage: { prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens },
        reference: input.stepId,
      });
      if (snapshot) snapshot.balance = balance;
    }
  }

  /**
   * Pays for a step's model calls once its result is written, without holding the step up: the execution's next
   * step (its credit check) and its end wait for it, on this worker. A worker dying between the result and the
   * payment loses the charge, as when the two ran side by side; a payment that fails is logged, since a retry of
   * the recorded step would not make it either.
   */
  function billLater(input: ChainStepInput, usage: StepAnswer['usage'], snapshot: ExecutionSnapshot) {
    pendingPayments.add(
      input,
      bill(input, usage, snapshot).catch((err: unknown) =>
        deps.logger.error(
          { err, organizationId: input.organizationId, runId: input.runId, stepId: input.stepId },
          'a chain step could not be paid for',
        ),
      ),
    );
  }

  /** Whether a guard holds; one that cannot be evaluated over this state (over its budget, or an error) fails
   * the step: the same state would fail it again, so it is not retried. */
  async function holds(field: string, expression: string, state: State): Promise<boolean> {
    try {
      return await guardHolds(expression, state);
    } catch (err) {
      throw ApplicationFailure.nonRetryable(
        `${field} could not be evaluated: ${(err as Error).message}`,
        FAILURES.chainStepFailed,
      );
    }
  }

  /** Renders the step's instructions and asks the model; returns its (schema-checked) answer. */
  async function ask(
    input: ChainStepInput,
    run: StepRun,
    tools: StepTools,
    credit: Promise<void>,
    element?: { value: unknown; index: number },
  ) {
    const { chain, step, state } = run;
    const context = element ? { ...state, element: element.value, elementIndex: element.index } : state;
    let instructions: string;
    try {
      instructions = renderTemplate(step.instructions, context);
    } catch (err) {
      throw ApplicationFailure.nonRetryable(
        `instructions could not be rendered: ${(err as Error).message}`,
        FAILURES.chainStepFailed,
      );
    }
    if (step.showWholeChainState)
      instructions += `\n\nThe chain's state so far:\n${JSON.stringify(state, null, 1)}`;
    await credit;
    const about = [step.name, step.description].filter(Boolean).join(': ');
    const answer = answerStep(
      deps.llm,
      {
        model: deps.chains.model,
        reasoning: step.reasoning,
        messages: [
          {
            role: 'system',
            content: about ? `${chain.llmInstructions}\n\nThis step: ${about}` : chain.llmInstructions,
          },
          { role: 'user', content: instructions },
        ],
        tools: tools.tools,
        toolChoice: step.toolChoice ?? null,
        outputSchemaJson: step.outputSchemaJson ?? null,
      },
      (call) => tools.run(call),
    );
    try {
      return await answer;
    } catch (err) {
      // Calls made before the step failed (answers that never fit its schema) were made: they are paid for.
      const spent = spentBefore(err);
      if (spent)
        await bill(input, spent.usage).catch((billing: unknown) =>
          deps.logger.error(
            { err: billing, organizationId: input.organizationId, runId: input.runId, stepId: input.stepId },
            'the model calls of a failed chain step could not be paid for',
          ),
        );
      throw err;
    }
  }

  /** Fails the step (for good) when `json` is over CHAIN_STATE_MAX_BYTES: the run's document could not hold it. */
  function checkStateSize(json: string, what: string) {
    const max = deps.chains.stateMaxBytes;
    // A UTF-8 byte is at least one UTF-16 unit: only long strings need counting.
    if (json.length * 3 <= max) return;
    const bytes = Buffer.byteLength(json);
    if (bytes > max)
      throw ApplicationFailure.nonRetryable(
        `${what} would hold ${bytes} bytes; at most ${max} (CHAIN_STATE_MAX_BYTES)`,
        FAILURES.chainStepFailed,
      );
  }

  /** Records a step's success with its new state, unless failAfterRunningIf holds over that state. */
  async function succeed(input: ChainStepInput, run: StepRun, fields: State, modelCalls: number) {
    const state = { ...run.state, ...fields };
    const { step } = run;
    if (step.failAfterRunningIf && (await holds('failAfterRunningIf', step.failAfterRunningIf, state)))
      return failed(`failAfterRunningIf held: ${step.failAfterRunningIf}`);
    await record(input, run, 'success', null, modelCalls, state);
    return { kind: 'success' as const };
  }

  /**
   * Records how the step ended (and the new state), only over the state the step read: a copy of the execution
   * that another worker's write made stale throws StaleSnapshot; an execution that no longer owns the run stops.
   */
  async function record(
    input: ChainStepInput,
    run: StepRun,
    outcome: StepOutcome,
    detail: string | null,
    modelCalls: number,
    state?: State,
  ) {
    const { step, snapshot } = run;
    const result = {
      stepId: step._id,
      stepOrder: step.stepOrder,
      name: step.name,
      outcome,
      detail,
      modelCalls,
      generation: input.generation,
      finishedAt: new Date(),
    };
    const runs = run.tenant.chainRuns;
    const stateJson = state && JSON.stringify(state);
    if (stateJson) checkStateSize(stateJson, "the run's state");
    const saved = await runs.recordStep(input.runId, input.generation, result, stateJson, snapshot.version);
    if (!saved) {
      executions.delete(input);
      const now = await runs.get(input.runId);
      if (now?.generation === input.generation) throw new StaleSnapshot();
      throw superseded('the run was re-run or deleted');
    }
    advance(input, snapshot, step._id, outcome, state, stateJson);
  }

  /** The worker's copy of the execution after a step's result is written (or taken as written). */
  function advance(
    input: ChainStepInput,
    snapshot: ExecutionSnapshot,
    stepId: string,
    outcome: StepOutcome,
    state?: State,
    stateJson?: string,
  ) {
    snapshot.version++;
    snapshot.stepResults = { ...snapshot.stepResults, [stepId]: { outcome, generation: input.generation } };
    if (state && stateJson) {
      snapshot.state = state;
      snapshot.stateChars = stateJson.length;
      if (stateJson.length > MAX_CACHED_STATE_CHARS) executions.delete(input);
    }
  }

  /**
   * Returns a step's success before it is written, when the workflow hands it on to the execution's next
   * activity (which makes sure it is written before it goes on: writePrevious) and its fields are small enough
   * for the history. The worker's copy of the execution takes it as written; the write starts at once.
   */
  function writeLater(input: ChainStepInput, run: StepRun, fields: State, modelCalls: number) {
    const { step, snapshot } = run;
    const state = { ...run.state, ...fields };
    const stateJson = JSON.stringify(state);
    checkStateSize(stateJson, "the run's state");
    const unwritten: UnwrittenStep = {
      stepId: step._id,
      stepOrder: step.stepOrder,
      name: step.name,
      modelCalls,
      finishedAt: new Date().toISOString(),
      fields,
      version: snapshot.version,
    };
    advance(input, snapshot, step._id, 'success', state, stateJson);
    const written = writeHandedOn(run.tenant.chainRuns, input, unwritten, stateJson).catch((err: unknown) => {
      deps.logger.warn(
        { err, organizationId: input.organizationId, runId: input.runId, stepId: step._id },
        "a chain step's result was not written; the execution's next activity writes it",
      );
      return false;
    });
    void written.then((saved) => saved || executions.delete(input));
    pendingWrites.add(input, step._id, written);
    return { kind: 'success' as const, unwritten };
  }

  /**
   * Makes sure the success of the execution's last step, which returned before it was written, is written: by
   * this worker's own write of it, else from the run as it is now plus what the step added (from the history).
   * `stale`: not written, because the state moved on after the step read it (another writer); `superseded`: the
   * execution no longer owns the run.
   */
  async function writePrevious(
    input: ChainRunInput & { previous?: UnwrittenStep },
  ): Promise<'written' | 'stale' | 'superseded'> {
    const { previous } = input;
    if (!previous || (await pendingWrites.written(input, previous.stepId))) return 'written';
    // This worker's copy of the execution took it as written.
    executions.delete(input);
    const runs = deps.repos.tenant(input.organizationId).chainRuns;
    const run = await runs.get(input.runId);
    if (run?.generation !== input.generation) return 'superseded';
    if (run.stepResults[previous.stepId]?.generation === input.generation) return 'written';
    if (stateVersionOf(run) !== previous.version) return 'stale';
    const state = { ...(JSON.parse(run.stateJson) as State), ...previous.fields };
    if (await writeHandedOn(runs, input, previous, JSON.stringify(state))) return 'written';
    // Written meanwhile by another attempt, or the run re-run: read again.
    throw new StaleSnapshot();
  }

  /**
   * Before a step goes on: the last step's success is written, or, when the state moved on after that step read
   * it, that step is run again over the current state (as a step whose own write finds the state moved is).
   */
  async function settlePrevious(input: ChainStepInput, previous: UnwrittenStep) {
    const settled = await writePrevious(input);
    if (settled === 'superseded') throw superseded('the run was re-run or deleted');
    if (settled === 'written') return;
    const { organizationId, runId, generation, actionChainId } = input;
    const again = await runStep(
      { organizationId, runId, generation, actionChainId, stepId: previous.stepId },
      true,
    );
    if (again.kind === 'failed')
      throw ApplicationFailure.nonRetryable(
        `step ${previous.stepOrder}${previous.name ? ` (${previous.name})` : ''}, asked again over the state as it is now, failed: ${again.detail}`,
        FAILURES.chainStepFailed,
      );
  }

  /** One attempt at a step (see runChainStep), on the worker's copy of the execution unless `fresh`. */
  async function runStep(input: ChainStepInput, fresh: boolean): Promise<ChainStepOutcome> {
    if (input.previous) await settlePrevious(input, input.previous);
    const cached = fresh || input.marksRunning ? undefined : executions.get(input);
    const credit = creditCheck(input, cached);
    const run = await load(input, cached);
    const { step, state, stepResult } = run;
    if (stepResult?.generation === input.generation && stepResult.outcome !== 'failed')
      return { kind: stepResult.outcome };
    if (step.runIf && !(await holds('runIf', step.runIf, state))) {
      await record(input, run, 'skipped', `runIf did not hold: ${step.runIf}`, 0);
      return { kind: 'skipped' };
    }
    if (step.failBeforeRunningIf && (await holds('failBeforeRunningIf', step.failBeforeRunningIf, state)))
      return failed(`failBeforeRunningIf held: ${step.failBeforeRunningIf}`);
    if (step.forEachElement) {
      const selection = selectElements(step.forEachElement, state);
      if (!selection.ok) return failed(selection.problem);
      // Over the ceiling the step fails before any element is stored or asked: none of it is billed.
      if (selection.elements.length > deps.chains.fanOutMax)
        return failed(fanOutTooLarge(step.forEachElement, selection.elements.length, deps.chains.fanOutMax));
      const runs = run.tenant.chainRuns;
      const fingerprint = createHash('sha256').update(JSON.stringify(selection.elements)).digest('hex');
      // Outputs of an earlier attempt over the same elements are kept (a resumed fan-out runs the rest);
      // onlyStep always starts the step afresh.
      if (
        input.onlyStep !== undefined ||
        (await runs.elementsFingerprint(input.runId, step._id)) !== fingerprint
      ) {
        await runs.clearElements(input.runId, step._id);
        await runs.putElements(input.runId, step._id, selection.elements, fingerprint);
      }
      return { kind: 'fan-out', elements: selection.elements.length, fanOut: fanOutSettings() };
    }
    const scope = `${workflowIds.chainRun(input.organizationId, input.runId, input.generation)}-${step._id}`;
    const tools = await loadStepTools(run.tenant, run.attachments, run.runRef, scope, deps);
    const answer = await ask(input, run, tools, credit);
    try {
      const fields = outputFields(step, answer.value);
      const handOn =
        input.handsOnResults &&
        !input.finishesRun &&
        !step.failAfterRunningIf &&
        JSON.stringify(fields).length <= MAX_UNWRITTEN_CHARS;
      if (handOn) return writeLater(input, run, fields, answer.modelCalls);
      return await succeed(input, run, fields, answer.modelCalls);
    } finally {
      // The run's end waits for it (finishRun), the last step's own payment included.
      billLater(input, answer.usage, run.snapshot);
    }
  }

  /** Ends the execution: records the failed step, if any, and the run's status. */
  async function finishRun(
    input: ChainRunInput & {
      status: 'success' | 'failed';
      statusMessage: string | null;
      failedStepId?: string;
      previous?: UnwrittenStep;
    },
  ): Promise<void> {
    const tenant = deps.repos.tenant(input.organizationId);
    // A run shown ended is paid for (the steps that did not wait for their payments, on this worker) and has
    // its steps' results (the last one may have returned before it was written; if the state moved on after it
    // read it, it is left unwritten: a re-run asks it again). A superseded execution's writes below write nothing.
    await Promise.all([pendingPayments.settled(input), writePrevious(input)]);
    pendingWrites.delete(input);
    const actionChainId = input.actionChainId ?? (await tenant.chainRuns.get(input.runId))?.actionChainId;
    const step =
      actionChainId && input.failedStepId
        ? await tenant.chains.getStep(actionChainId, input.failedStepId)
        : null;
    // A superseded execution writes nothing: the run is another execution's now.
    if (step)
      await tenant.chainRuns.recordStep(input.runId, input.generation, {
        stepId: step._id,
        stepOrder: step.stepOrder,
        name: step.name,
        outcome: 'failed',
        detail: input.statusMessage,
        modelCalls: 0,
        generation: input.generation,
        finishedAt: new Date(),
      });
    // The run's browser sessions end with it (no step of the execution runs any more), and before it is shown
    // ended: whoever sees the run ended finds its sessions stopped.
    if (actionChainId)
      await endSessionsOf(deps.repos, deps.temporal, input.organizationId, {
        type: 'chain_run',
        actionChainId,
        runId: input.runId,
      });
    await tenant.chainRuns.finish(input.runId, input.generation, input.status, input.statusMessage);
    executions.delete(input);
    deps.logger.info(
      { organizationId: input.organizationId, runId: input.runId, status: input.status },
      'chain run finished',
    );
  }

  const fanOutSettings = () => ({
    batchSize: deps.chains.fanOutBatch,
    concurrency: deps.chains.fanOutConcurrency,
  });

  /** A planned execution's last step ends the run once it succeeded or was skipped: no activity follows it. */
  async function settle(input: ChainStepInput, outcome: ChainStepOutcome): Promise<ChainStepOutcome> {
    if (input.finishesRun && (outcome.kind === 'success' || outcome.kind === 'skipped'))
      await finishRun({ ...input, status: 'success', statusMessage: null });
    return outcome;
  }

  return {
    /** Marks the execution running and lists the steps it runs (runPlan). Only executions started before runs
     * were planned at creation call it: their input has no plan. */
    async beginChainRun(input: ChainRunInput): Promise<ChainRunPlan> {
      const tenant = deps.repos.tenant(input.organizationId);
      // The same round reads what the steps need, for the worker's copy of the execution.
      const [run, definition, balance] = await Promise.all([
        tenant.chainRuns.markRunning(input.runId, input.generation),
        input.actionChainId ? readDefinition(tenant, input.actionChainId) : undefined,
        deps.credits.balance(input.organizationId),
      ]);
      if (!run) throw superseded('the run was re-run or deleted');
      const [chain, all, attachments] =
        input.actionChainId === run.actionChainId
          ? definition!
          : [undefined, await tenant.chains.listSteps(run.actionChainId), []];
      if (chain) executions.set(input, snapshotOf(run, chain, all, attachments, balance));
      return { ...runPlan(all, run.stepResults, input.onlyStep), fanOut: fanOutSettings() };
    },

    /**
     * Runs one step: its guards, then the model (or, for a fan-out step, stores its elements for the fan-out
     * workflows). A retry after the step was recorded returns what was recorded, without asking the model again.
     */
    async runChainStep(input: ChainStepInput): Promise<ChainStepOutcome> {
      for (let fresh = retried(); ; fresh = true) {
        try {
          return await settle(input, await runStep(input, fresh));
        } catch (err) {
          // Once only: a state read afresh is current.
          if (!(err instanceof StaleSnapshot) || fresh) throw err;
        }
      }
    },

    /** The elements of [from, to) of a fan-out step that have no output yet. */
    async pendingChainElements(input: ChainFanOutInput): Promise<number[]> {
      return deps.repos
        .tenant(input.organizationId)
        .chainRuns.pendingElements(input.runId, input.stepId, input.from, input.to);
    },

    /** Runs a fan-out step for one element and stores its output (nothing goes back into the history). */
    async runChainElement(input: ChainElementInput): Promise<void> {
      const credit = creditCheck(input);
      const ctx = await fanOutContext(input);
      const runs = ctx.tenant.chainRuns;
      const element = await runs.getElement(input.runId, input.stepId, input.index);
      if (!element) throw superseded('the fan-out elements were replaced');
      if (element.outputJson !== null) return;
      const tools = { tools: ctx.tools.tools, run: (call: ChatToolCall) => ctx.tools.run(call, input.index) };
      const answer = await ask(input, ctx, tools, credit, {
        value: JSON.parse(element.elementJson),
        index: input.index,
      });
      const outputJson = JSON.stringify(answer.value ?? null);
      // The call was made: it is paid for even when its answer is too large to keep.
      const paid = bill(input, answer.usage);
      try {
        checkStateSize(outputJson, "the element's output");
      } catch (err) {
        await paid;
        throw err;
      }
      await Promise.all([
        paid,
        runs.putElementOutput(input.runId, input.stepId, input.index, {
          outputJson,
          modelCalls: answer.modelCalls,
        }),
      ]);
    },

    /** Joins a fan-out step's outputs to the state: each output field as an array in element order. */
    async collectChainFanOut(input: ChainStepInput): Promise<ChainStepOutcome> {
      const run = await load(input, cachedExecution(input));
      const runs = run.tenant.chainRuns;
      const outputs = await runs.elementOutputs(input.runId, input.stepId);
      const missing = outputs.findIndex((o) => o.outputJson === null);
      if (missing >= 0) return failed(`element ${missing} has no output`);
      const values = outputs.map((o) => JSON.parse(o.outputJson!) as unknown);
      const modelCalls = outputs.reduce((sum, o) => sum + o.modelCalls, 0);
      const { step } = run;
      const fields: State = {};
      if (step.outputSchemaJson) {
        for (const p of declaredFields(step.outputSchemaJson))
          fields[p] = values.map((v) => (v as State)[p] ?? null);
      } else fields[`step${step.stepOrder}`] = values;
      const outcome = await succeed(input, run, fields, modelCalls);
      if (outcome.kind === 'success') await runs.clearElements(input.runId, step._id);
      return settle(input, outcome);
    },

    /** The run an agent's chain tool call starts (its id derives from the call, so a retry finds it). */
    async createAgentChainRun(input: AgentChainRunInput): Promise<ChainRunInput> {
      let payload: unknown;
      try {
        payload = input.arguments ? JSON.parse(input.arguments) : {};
      } catch {
        throw ApplicationFailure.nonRetryable('the chain input is not valid JSON', FAILURES.toolInput);
      }
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
        throw ApplicationFailure.nonRetryable('the chain input must be a JSON object', FAILURES.toolInput);
      const runId = derivedRunId(input.callKey);
      try {
        const { input: run } = await deps.runs.createRun(input.organizationId, {
          actionChainId: input.actionChainId,
          payload: payload as Record<string, unknown>,
          triggerType: 'agent',
          startedByUserId: `agent:${input.agentId}`,
          runId,
        });
        return run;
      } catch (err) {
        // A chain deleted meanwhile, or an input that does not fit: the model reads why.
        if (err instanceof AppError && err.status < 500)
          throw ApplicationFailure.nonRetryable(err.message, FAILURES.toolInput);
        throw err;
      }
    },

    /** What the model reads of a finished run: how it ended and its state. */
    async chainRunOutcome(input: ChainRunInput) {
      const run = await deps.repos.tenant(input.organizationId).chainRuns.get(input.runId);
      if (!run) return { status: 'failed', statusMessage: 'the run was deleted' };
      return {
        runId: run._id,
        status: run.status,
        statusMessage: run.statusMessage,
        state: JSON.parse(run.stateJson) as State,
      };
    },

    /** The local activity that ends an execution its last step did not end: a failed one, one with no steps to
     * run, and every execution started without a plan. */
    finishChainRun: finishRun,
  };
}
