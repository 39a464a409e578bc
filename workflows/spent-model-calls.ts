import { ApplicationFailure } from '@temporalio/workflow';

/**
 * The model calls a chain step's activity made before the step failed for good (each one billed): its
 * chainStepFailed failure carries them as its first detail, `{ modelCalls, usage }`. A fan-out slice's child
 * workflow fails with the sum of its failed elements' calls, `{ modelCalls }`, whatever its first failure's
 * type. 0 for a failure that carries none.
 */
export function spentModelCalls(err: unknown): number {
  let cause = err as { cause?: unknown } | undefined;
  while (cause && !(cause instanceof ApplicationFailure)) cause = cause.cause as typeof cause;
  if (!(cause instanceof ApplicationFailure)) return 0;
  const spent = cause.details?.[0] as { modelCalls?: unknown } | undefined;
  return typeof spent?.modelCalls === 'number' ? spent.modelCalls : 0;
}
