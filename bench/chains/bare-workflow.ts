import { proxyActivities } from '@temporalio/workflow';

// The baseline of bench/chains.ts: a workflow of N bare activities, each one model call, nothing else.
type BareActivities = { bareModelCall(input: { i: number }): Promise<string> };

const { bareModelCall } = proxyActivities<BareActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

export async function bareStepsWorkflow(steps: number): Promise<number> {
  for (let i = 0; i < steps; i++) await bareModelCall({ i });
  return steps;
}
