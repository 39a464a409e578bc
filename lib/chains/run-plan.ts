import type { PlannedSteps } from '@contracts';
import type { StepOutcome } from './chain-run.schema';

type PlannedStep = { _id: string; stepOrder: number; name: string; enabled: boolean };

/**
 * The steps an execution runs, in order (`steps` as listed: by stepOrder): every enabled step that has not
 * succeeded or been skipped yet (a re-run resumes at the first that did not), or only `onlyStep`.
 */
export function runPlan(
  steps: readonly PlannedStep[],
  stepResults: Readonly<Record<string, { outcome: StepOutcome }>>,
  onlyStep: number | undefined,
): PlannedSteps {
  const planned = steps.filter((s) =>
    onlyStep !== undefined
      ? s.stepOrder === onlyStep
      : s.enabled && !['success', 'skipped'].includes(stepResults[s._id]?.outcome ?? ''),
  );
  return {
    steps: planned.map((s) => ({ stepId: s._id, stepOrder: s.stepOrder, name: s.name })),
  };
}
