import { createRunnableChain } from './chains';
import type { TestEnv } from './env';
import { as, type TestOrg } from './org';

/**
 * A webhook of `org` (with `fields` besides its name) whose one handler runs a one-step chain with the delivery's
 * `body.text` as `message`. Script the chain's answer with `chain.answer`.
 */
export async function createMessageWebhook(env: TestEnv, org: TestOrg, fields: Record<string, unknown> = {}) {
  const chain = await createRunnableChain(env, org, [
    {
      stepOrder: 1,
      instructions: 'Handle {{input.message}}',
      inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
    },
  ]);
  const created = await as(env, org.owner.token)
    .post(org.path('/webhooks'), { name: 'Events', ...fields })
    .expect(201);
  const webhookId = created.body.webhookId as string;
  await as(env, org.owner.token)
    .post(org.path(`/webhooks/${webhookId}/handlers`), {
      handlerType: 'action-chain',
      actionChainId: chain.chainId,
      instructions: 'Handle the event',
      inputMapping: { message: '{{body.text}}' },
    })
    .expect(201);
  return { chain, webhookId, signingSecret: created.body.signingSecret as string | undefined };
}
