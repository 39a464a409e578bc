import { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * Temporal's time-skipping test server, provisioned from Maven Central by `npm test` (stack/provision.mjs), which
 * passes its path in TEMPORAL_TEST_SERVER. (The SDK's default would download it at run time.)
 */
export function startTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the suite with `npm test`');
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
  });
}
