import { expect } from 'chai';
import { createTestAgent } from '@test/helpers/agents';
import { as } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { useWorkerAndOrg } from '@test/helpers/worker';

export interface AnalysisView {
  analysisId: string;
  conversationId: string;
  agentId: string;
  creatorUserId: string;
  title: string;
  description: string;
  status: string;
  run: number;
  result: string | null;
  artifactId: string | null;
  artifactVersionId: string | null;
  error: string | null;
  startedAt: string | null;
  completedAt: string | null;
}

/**
 * The shared setup of the analysis suites: a worker, a fresh 'Analysis Org' per test, and the
 * analysis request helpers. Call inside a describe; `suite.env`/`suite.org` are set in the hooks,
 * the helpers read them when called.
 */
export function useAnalysisSuite() {
  const suite = useWorkerAndOrg('Analysis Org');

  const analysisPath = (conversationId: string, suffix = '') =>
    suite.org.path(`/conversations/${conversationId}/analysis${suffix}`);

  async function conversationWithAgent(instructions = 'You are a careful analyst.') {
    const { env, org } = suite;
    const agent = await createTestAgent(env, org.organizationId, { instructions });
    const conv = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId: agent.agentId })
      .expect(201);
    return { ...agent, conversationId: conv.body.conversationId as string };
  }

  async function create(conversationId: string, body: object = { title: 'Q', description: 'D' }) {
    const res = await as(suite.env, suite.org.owner.token).post(analysisPath(conversationId), body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as AnalysisView;
  }

  const read = async (conversationId: string, analysisId: string) =>
    (
      await as(suite.env, suite.org.owner.token)
        .get(analysisPath(conversationId, `/${analysisId}`))
        .expect(200)
    ).body as AnalysisView;

  /** Waits until the analysis is in a final state. */
  const finished = (conversationId: string, analysisId: string) =>
    eventually(async () => {
      const a = await read(conversationId, analysisId);
      return ['completed', 'failed', 'cancelled'].includes(a.status) ? a : undefined;
    }, 60_000);

  return { suite, analysisPath, conversationWithAgent, create, read, finished };
}
