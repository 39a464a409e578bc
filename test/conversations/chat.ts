import type { TestEnv } from '@test/helpers/env';
import { as, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';

/**
 * Starting and reading turns in the organization of a `useWorkerAndOrg` suite, for the conversations-and-turns
 * files; each call reads the suite's current environment and organization.
 */
export function chatOf(suite: { env: TestEnv; org: TestOrg }) {
  const post = (body: object, token = suite.org.owner.token) =>
    as(suite.env, token).post(suite.org.path('/conversations'), body);
  const messagesOf = async (conversationId: string) =>
    (
      await as(suite.env, suite.org.owner.token)
        .get(suite.org.path(`/conversations/${conversationId}?messagesLimit=500`))
        .expect(200)
    ).body.messages as Array<{
      role: string;
      status: string;
      content: Array<{ text: string }>;
    }>;
  const replyOf = async (conversationId: string) =>
    eventually(async () => (await messagesOf(conversationId)).find((m) => m.role === 'assistant'), 60_000);
  /** The local activities a finished turn ran, in order, from its history. */
  const localActivitiesOf = async (workflowId: string) => {
    const handle = suite.env.deps.temporal.client.workflow.getHandle(workflowId);
    await handle.result();
    const { events } = await handle.fetchHistory();
    return (events ?? []).flatMap((e) => {
      const marker = e.markerRecordedEventAttributes;
      if (marker?.markerName !== 'core_local_activity') return [];
      const data = marker.details!.data!.payloads![0]!.data!;
      return [(JSON.parse(Buffer.from(data).toString()) as { activity_type: string }).activity_type];
    });
  };
  return { post, messagesOf, replyOf, localActivitiesOf };
}
