import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { SEARCH_ATTRIBUTE_KEYS } from '@contracts';

/**
 * Temporal's time-skipping test server, provisioned from Maven Central by `npm test` (stack/provision.mjs), which
 * passes its path in TEMPORAL_TEST_SERVER. (The SDK's default would download it at run time.) The service's
 * search attributes are registered on it, as on every server the service runs against: child workflows carry them.
 */
export async function startTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = process.env.TEMPORAL_TEST_SERVER;
  if (!path) throw new Error('TEMPORAL_TEST_SERVER is not set: run the suite with `npm test`');
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path } },
  });
  const keyword = encodeSearchAttributeIndexedValueType('KEYWORD')!;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(Object.values(SEARCH_ATTRIBUTE_KEYS).map((k) => [k.name, keyword])),
  });
  return env;
}
