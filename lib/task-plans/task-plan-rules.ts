/*
 * Task plans: what an agent intends to do in a conversation, step by step, and how far it got.
 *
 * Plan status (docs/agents.md "Task plans"):
 *   (none)  → active     the planning tool creates the plan
 *   active  → active     the planning tool changes steps
 *   active  → completed  every step is completed or skipped after a change by the agent
 *   active  → failed     the agent gives the plan up (`status: "failed"`)
 *   active  → cancelled  POST …/cancel: the turn working on it stops after its current task
 * completed, failed and cancelled are final: the tool refuses to change them (the agent makes a new plan), except
 * that the step in progress when a cancel arrives may still finish.
 *
 * Step status: the agent sets pending, in_progress, completed, skipped or failed, in any order. A cancel turns
 * the pending steps into cancelled at once; a step in progress finishes (the spec's "execution stops after the
 * current task completes"): the agent may set it completed, skipped or failed, and nothing else. What is still
 * in progress when the turn ends, or when no turn works on the plan, is cancelled then.
 */

export const PLAN_TYPES = ['general', 'browser'] as const;
export type PlanType = (typeof PLAN_TYPES)[number];
export const PLAN_STATUSES = ['active', 'completed', 'failed', 'cancelled'] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
export const AGENT_STEP_STATUSES = ['pending', 'in_progress', 'completed', 'skipped', 'failed'] as const;
export const STEP_STATUSES = [...AGENT_STEP_STATUSES, 'cancelled'] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const MAX_STEPS = 50;
export const MAX_DESCRIPTION = 1000;
const STEP_ID = /^[A-Za-z0-9_.:-]{1,64}$/;

export interface PlanStep {
  stepId: string;
  description: string;
  status: StepStatus;
}

export interface StepChange {
  stepId: string;
  description?: string;
  status: (typeof AGENT_STEP_STATUSES)[number];
}

/** What the agent asks of the planning tool. */
export interface PlanToolArgs {
  /** absent: create a plan */
  planId?: string;
  type?: PlanType;
  steps: StepChange[];
  /** `failed`: the agent gives the plan up */
  status?: 'failed';
}

/** Arguments the model must correct: the message goes back to it as the tool's result. */
export class PlanInputError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseStep(raw: unknown, i: number): StepChange {
  const where = `steps[${i}]`;
  if (!isObject(raw)) throw new PlanInputError(`${where} must be an object with stepId and status`);
  const { stepId, description, status } = raw;
  if (typeof stepId !== 'string' || !STEP_ID.test(stepId))
    throw new PlanInputError(`${where}.stepId must be 1 to 64 letters, digits or _ . : -`);
  if (description !== undefined && (typeof description !== 'string' || !description.trim()))
    throw new PlanInputError(`${where}.description must be a non-empty string`);
  if (typeof description === 'string' && description.length > MAX_DESCRIPTION)
    throw new PlanInputError(`${where}.description may have at most ${MAX_DESCRIPTION} characters`);
  if (!(AGENT_STEP_STATUSES as readonly unknown[]).includes(status))
    throw new PlanInputError(`${where}.status must be one of ${AGENT_STEP_STATUSES.join(', ')}`);
  return {
    stepId,
    ...(typeof description === 'string' ? { description: description.trim() } : {}),
    status: status as StepChange['status'],
  };
}

/** The model's arguments, checked; a PlanInputError says what to fix. */
export function parsePlanArgs(args: Record<string, unknown>): PlanToolArgs {
  const { planId, type, steps, status } = args;
  if (planId !== undefined && (typeof planId !== 'string' || !planId))
    throw new PlanInputError('planId must be the planId a previous call returned');
  if (type !== undefined && !(PLAN_TYPES as readonly unknown[]).includes(type))
    throw new PlanInputError(`type must be one of ${PLAN_TYPES.join(', ')}`);
  if (status !== undefined && status !== 'failed')
    throw new PlanInputError('status may only be "failed" (to give the plan up)');
  if (!Array.isArray(steps)) throw new PlanInputError('steps must be an array');
  if (steps.length > MAX_STEPS) throw new PlanInputError(`a plan has at most ${MAX_STEPS} steps`);
  const parsed = steps.map(parseStep);
  const ids = new Set<string>();
  for (const step of parsed) {
    if (ids.has(step.stepId)) throw new PlanInputError(`stepId ${step.stepId} appears twice`);
    ids.add(step.stepId);
  }
  return {
    ...(typeof planId === 'string' ? { planId } : {}),
    ...(type ? { type: type as PlanType } : {}),
    steps: parsed,
    ...(status === 'failed' ? { status } : {}),
  };
}

/** The steps of a new plan: at least one, each with a description. */
export function newSteps(changes: StepChange[]): PlanStep[] {
  if (!changes.length) throw new PlanInputError('a new plan needs at least one step');
  return changes.map((c) => {
    if (!c.description) throw new PlanInputError(`step ${c.stepId} of a new plan needs a description`);
    return { stepId: c.stepId, description: c.description, status: c.status };
  });
}

/** Steps after a change: known stepIds change in place (a description left out stays), new ones are appended
 * in the order given (they need a description). */
export function mergeSteps(current: PlanStep[], changes: StepChange[]): PlanStep[] {
  const next = current.map((s) => ({ ...s }));
  for (const change of changes) {
    const existing = next.find((s) => s.stepId === change.stepId);
    if (existing) {
      existing.status = change.status;
      if (change.description) existing.description = change.description;
    } else {
      if (!change.description)
        throw new PlanInputError(`step ${change.stepId} is new and needs a description`);
      next.push({ stepId: change.stepId, description: change.description, status: change.status });
    }
  }
  if (next.length > MAX_STEPS) throw new PlanInputError(`a plan has at most ${MAX_STEPS} steps`);
  return next;
}

/** The status of a plan after the agent wrote it. */
export function statusAfterWrite(steps: PlanStep[], requested?: 'failed'): PlanStatus {
  if (requested === 'failed') return 'failed';
  const done = steps.length > 0 && steps.every((s) => s.status === 'completed' || s.status === 'skipped');
  return done ? 'completed' : 'active';
}

/** The steps of a plan just cancelled: what was still to do is cancelled; a step in progress may finish. */
export function cancelSteps(steps: PlanStep[]): PlanStep[] {
  return steps.map((s) => (s.status === 'pending' ? { ...s, status: 'cancelled' } : { ...s }));
}

/** The steps of a cancelled plan nobody will finish: those still in progress are cancelled too. */
export function endStepsUnderWay(steps: PlanStep[]): PlanStep[] {
  return steps.map((s) => (s.status === 'in_progress' ? { ...s, status: 'cancelled' } : { ...s }));
}

const FINISHED: ReadonlySet<StepStatus> = new Set(['completed', 'skipped', 'failed']);

/** Steps of a cancelled plan after the agent wrote it: only a step in progress may change, and only to finish. */
export function finishSteps(current: PlanStep[], changes: StepChange[]): PlanStep[] {
  for (const change of changes) {
    const step = current.find((s) => s.stepId === change.stepId);
    if (step?.status !== 'in_progress' || !FINISHED.has(change.status))
      throw new PlanInputError(
        'the plan is cancelled: only the step in progress may finish (completed, skipped or failed); ' +
          `no new task starts (step ${change.stepId})`,
      );
  }
  return mergeSteps(current, changes);
}
