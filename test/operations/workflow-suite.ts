import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { WORKFLOWS, type TurnInput, type TurnResult } from '@contracts';
import { mutationTestingWorkerOptions } from '@test/helpers/mutation';
import { startTimeSkippingEnv } from '@test/helpers/time-skipping';
import { workflowBundle } from '@test/helpers/worker';
import { ORG, type fakeActivities } from '@test/operations/workflow-fakes';

/**
 * The shared setup of the time-skipping workflow suites: the test server for the describe, and the
 * worker and turn helpers. Call inside a describe; `suite.env` is set in the before hook, the helpers
 * read it when called.
 */
export function useTimeSkippingSuite() {
  const suite = {} as { env: TestWorkflowEnvironment };
  before(async () => {
    suite.env = await startTimeSkippingEnv();
  });
  after(async () => suite.env?.teardown());

  /** Runs `fn` with a worker of the real workflow bundle and the fake activities. */
  async function withWorker<T>(
    fake: ReturnType<typeof fakeActivities>,
    fn: (taskQueue: string) => Promise<T>,
    taskQueue = `wf-${randomUUID()}`,
  ) {
    const worker = await Worker.create({
      connection: suite.env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: fake.activities,
      ...mutationTestingWorkerOptions(),
    });
    return worker.runUntil(fn(taskQueue));
  }

  const turnInput = (extra: Partial<TurnInput> = {}): TurnInput => ({
    organizationId: ORG,
    conversationId: 'cnv_1',
    agentId: 'agt_a',
    requestId: randomUUID(),
    userId: 'usr_1',
    ...extra,
  });
  const runTurn = (taskQueue: string, input = turnInput()) =>
    suite.env.client.workflow.execute<(i: TurnInput) => Promise<TurnResult>>(WORKFLOWS.turn, {
      taskQueue,
      workflowId: `${ORG}-turn-${input.requestId}`,
      args: [input],
    });

  return { suite, withWorker, turnInput, runTurn };
}
