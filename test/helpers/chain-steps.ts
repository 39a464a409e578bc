import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ChainRunInput } from '@contracts';
import type { TestEnv } from './env';
import type { TestOrg } from './org';

/** Runs an activity as a worker would, outside a workflow (for chain activities driven step by step). */
export function runActivity<I, O>(fn: (input: I) => Promise<O>, input: I): Promise<O> {
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(fn, input);
}

/** A new run of the chain, as its execution's workflow would get it: the execution, and its plan's step ids. */
export async function plannedExecution(env: TestEnv, org: TestOrg, actionChainId: string) {
  const { input } = await env.deps.services.chainRuns.createRun(org.organizationId, {
    actionChainId,
    payload: {},
    triggerType: 'api',
    startedByUserId: org.chat.userId,
  });
  const { plan, ...execution } = input as ChainRunInput & { plan: { steps: Array<{ stepId: string }> } };
  return { execution, stepIds: plan.steps.map((s) => s.stepId) };
}

/**
 * Whether `done()` comes to hold while the run is read `reads` times, one read after another: for what the
 * activities would do within a few writes, many times as much work (a bound in work, not in time).
 */
export async function within(
  env: TestEnv,
  org: TestOrg,
  runId: string,
  reads: number,
  done: () => boolean | Promise<boolean>,
) {
  for (let i = 0; i < reads; i++) {
    if (await done()) return true;
    await env.deps.repos.tenant(org.organizationId).chainRuns.get(runId);
  }
  return done();
}
