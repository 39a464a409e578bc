import { createHash } from 'node:crypto';
import type { ChainStepInput } from '@contracts';
import { selectElements } from '@lib/chains/expressions';
import { fanOutTooLarge } from '@lib/chains/fan-out-limit';
import type { StepRun } from './execution-snapshot';

/**
 * Selects a fan-out step's elements from the state and stores them for the fan-out workflows. Over the ceiling
 * (`fanOutMax`) the step fails before any element is stored or asked: none of it is billed.
 */
export async function prepareElements(
  input: ChainStepInput,
  run: StepRun,
  fanOutMax: number,
): Promise<{ kind: 'failed'; detail: string } | { kind: 'fan-out'; elements: number }> {
  const { step } = run;
  const selection = selectElements(step.forEachElement!, run.state);
  if (!selection.ok) return { kind: 'failed', detail: selection.problem };
  if (selection.elements.length > fanOutMax)
    return {
      kind: 'failed',
      detail: fanOutTooLarge(step.forEachElement!, selection.elements.length, fanOutMax),
    };
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
  return { kind: 'fan-out', elements: selection.elements.length };
}
