import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';
import type { ChainFanOutInput } from '@contracts';
import { failureReason } from './agent-loop';
import { chainSteps, chainStore } from './chain-activity-proxies';
import { spentModelCalls } from './spent-model-calls';

/**
 * One slice [from, to) of a fan-out step: its elements without an output run as activities, `concurrency` at a
 * time; each stores its own output, so the history holds no element data. The first element that fails for good
 * fails the slice (the others in flight finish first), naming the element and carrying the model calls every
 * failed element made (the run view counts them; the elements that succeeded have theirs with their outputs).
 */
export async function chainFanOutWorkflow(input: ChainFanOutInput): Promise<void> {
  const pending = await chainStore.pendingChainElements(input);
  let next = 0;
  let failure: { index: number; reason: string; type?: string } | undefined;
  let modelCalls = 0;
  const lane = async () => {
    while (next < pending.length && !failure) {
      const index = pending[next++]!;
      try {
        await chainSteps.runChainElement({ ...input, index });
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        modelCalls += spentModelCalls(err);
        const type = err.cause instanceof ApplicationFailure ? err.cause.type : undefined;
        failure ??= { index, reason: failureReason(err), type: type ?? undefined };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency, pending.length) }, lane));
  if (failure)
    throw ApplicationFailure.nonRetryable(
      `element ${failure.index}: ${failure.reason}`,
      failure.type,
      ...(modelCalls ? [{ modelCalls }] : []),
    );
}
