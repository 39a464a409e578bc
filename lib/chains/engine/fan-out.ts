import type {
  ChainElementInput,
  ChainFanOutInput,
  ChainStepInput,
  ChainStepOutcome,
  ChatToolCall,
} from '@contracts';
import { BoundedMap } from '@lib/bounded-map';
import { askModel } from './ask-model';
import type { Attempt } from './attempt';
import type { ChainEngineDeps } from './deps';
import { RunSuperseded } from './errors';
import type { StepRun } from './execution-snapshot';
import type { StepRunner } from './step-runner';
import { joinedFields } from './step-outputs';
import type { StepTools } from './step-tools';

/** A fan-out step's elements: each asked on its own (its output stored), then joined into the state. */
export class FanOutRunner {
  // A fan-out step's elements share one state (it changes only when the step's outputs are collected): each
  // worker loads it once per step execution, not once per element.
  private readonly contexts = new BoundedMap<string, Promise<StepRun & { tools: StepTools }>>(16);

  constructor(
    private readonly deps: Pick<ChainEngineDeps, 'repos' | 'llm' | 'chains'>,
    private readonly steps: StepRunner,
  ) {}

  /** The elements of [from, to) of a fan-out step that have no output yet. */
  pending(input: ChainFanOutInput): Promise<number[]> {
    return this.deps.repos
      .tenant(input.organizationId)
      .chainRuns.pendingElements(input.runId, input.stepId, input.from, input.to);
  }

  /** Runs a fan-out step for one element and stores its output (nothing goes back into the history). */
  async runElement(input: ChainElementInput, attempt: Attempt): Promise<void> {
    const { billing } = this.steps;
    const credit = billing.creditCheck(input);
    const ctx = await this.context(input, attempt);
    const runs = ctx.tenant.chainRuns;
    const element = await runs.getElement(input.runId, input.stepId, input.index);
    if (!element) throw new RunSuperseded('the fan-out elements were replaced');
    if (element.outputJson !== null) return;
    const tools = { tools: ctx.tools.tools, run: (call: ChatToolCall) => ctx.tools.run(call, input.index) };
    const answer = await askModel(this.deps, billing, input, ctx, tools, credit, attempt, {
      value: JSON.parse(element.elementJson),
      index: input.index,
    });
    const outputJson = JSON.stringify(answer.value ?? null);
    // The call was made: it is paid for even when its answer is too large to keep.
    const paid = billing.bill(input, answer.usage);
    try {
      this.steps.checkStateSize(outputJson, "the element's output");
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
  }

  /** Joins a fan-out step's outputs to the state: each output field as an array in element order. */
  async collect(input: ChainStepInput, attempt: Attempt): Promise<ChainStepOutcome> {
    const run = await this.steps.load(input, this.steps.held(input, attempt));
    const runs = run.tenant.chainRuns;
    const outputs = await runs.elementOutputs(input.runId, input.stepId);
    const missing = outputs.findIndex((o) => o.outputJson === null);
    if (missing >= 0) return { kind: 'failed', detail: `element ${missing} has no output` };
    const values = outputs.map((o) => JSON.parse(o.outputJson!) as unknown);
    const modelCalls = outputs.reduce((sum, o) => sum + o.modelCalls, 0);
    const outcome = await this.steps.succeed(input, run, joinedFields(run.step, values), modelCalls);
    if (outcome.kind === 'success') await runs.clearElements(input.runId, run.step._id);
    return this.steps.settle(input, outcome);
  }

  /** The step's run and tools, loaded once per step execution on this worker. */
  private context(input: ChainElementInput, attempt: Attempt) {
    const key = `${input.organizationId}:${input.runId}:${input.generation}:${input.stepId}`;
    let ctx = this.contexts.get(key);
    if (!ctx) {
      ctx = (async () => {
        const run = await this.steps.load(input, this.steps.held(input, attempt));
        return { ...run, tools: await this.steps.loadTools(input, run, attempt) };
      })();
      ctx.catch(() => this.contexts.delete(key));
      this.contexts.set(key, ctx);
    }
    return ctx;
  }
}
