// Webhooks: creates a webhook whose handler asks an agent about each delivery, calls it as an outside system
// would (no credentials), and lists its deliveries.
//
//   npx tsx examples/webhooks.ts --org "$ORG" --token "$KEY" --agent "$AGENT"
import { createClient } from '../clients/typescript/src';
import { connect, must, run, sleep } from './connect';

async function main() {
  const { args, baseUrl, client, org } = connect('webhooks', ['agent']);
  const webhook = must(
    await client.POST('/orgs/{organizationId}/webhooks', {
      params: { path: org },
      body: { name: 'Shop events', description: 'Orders from the shop' },
    }),
  );
  const inWebhook = { ...org, webhookId: webhook.webhookId };
  must(
    await client.POST('/orgs/{organizationId}/webhooks/{webhookId}/handlers', {
      params: { path: inWebhook },
      body: { handlerType: 'agent', agentId: args.agent, instructions: 'Summarise this order in one line.' },
    }),
  );
  console.log(`the shop posts to ${webhook.executeUrl}`);
  // The execute endpoint is public: the shop has no credentials.
  const shop = createClient({ baseUrl, token: '' });
  must(
    await shop.POST('/orgs/{organizationId}/webhooks/{webhookId}/execute', {
      params: { path: inWebhook },
      body: { order: 1042, items: [{ sku: 'mug', quantity: 2 }] },
    }),
  );
  await sleep(2000);
  const deliveries = must(
    await client.GET('/orgs/{organizationId}/webhooks/{webhookId}/deliveries', {
      params: { path: inWebhook },
    }),
  );
  for (const d of deliveries.items) console.log(d.deliveryId, d.status, d.receivedAt);
}

run(main);
