import { randomBytes } from 'node:crypto';
import type { TestEnv } from './env';

/** An agent with a model name of its own, so the scripted LLM can answer per test (`llm.on({ model })`). */
export async function createTestAgent(
  env: TestEnv,
  organizationId: string,
  fields: { name?: string; instructions?: string } = {},
) {
  const model = `test-model-${randomBytes(5).toString('hex')}`;
  const agentId = `agt_${randomBytes(8).toString('hex')}`;
  const name = fields.name ?? 'Helper';
  await env.deps.repos.tenant(organizationId).agents.create(agentId, {
    name,
    nameSort: name.toLowerCase(),
    description: 'A test agent',
    instructions: fields.instructions ?? 'You are helpful.',
    model,
    creativityScore: '0.7',
  });
  return { agentId, model };
}
