import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createClient } from '@client';
import { appHtml } from '@test/helpers/artifacts';
import { systemText } from '@test/helpers/chains';
import { ok, useClientAndOrg } from '@test/helpers/client';
import { eventually } from '@test/helpers/wait';

// As client.test.ts, for the automation features: chains, webhooks, schedules, artifacts and apps.
describe('the generated TypeScript client: chains, webhooks, schedules, apps', function () {
  this.timeout(180_000);
  const suite = useClientAndOrg('Client Automation Org');

  /** A one-step chain whose step answers `{ reply }` for `{ message }`; the scripted model echoes the message. */
  async function echoChain() {
    const { env, client, inOrg } = suite;
    const marker = `client-chain-${randomBytes(4).toString('hex')}`;
    const chain = ok(
      await client.POST('/orgs/{organizationId}/chains', {
        params: { path: inOrg },
        body: {
          name: 'Echo',
          description: 'Echoes the message',
          llmInstructions: `You are ${marker}.`,
          steps: [
            {
              stepOrder: 1,
              instructions: 'Echo {{input.message}}',
              inputSchema: {
                type: 'object',
                properties: { message: { type: 'string' } },
                required: ['message'],
              },
              outputSchema: {
                type: 'object',
                properties: { reply: { type: 'string' } },
                required: ['reply'],
              },
            },
          ],
        },
      }),
    );
    env.llm.on(
      (body) => systemText(body).includes(marker),
      (body) => {
        const last = body.messages[body.messages.length - 1]?.content;
        return { content: JSON.stringify({ reply: `echo: ${typeof last === 'string' ? last : ''}` }) };
      },
    );
    return chain;
  }

  /** The chain's runs once one has ended. */
  const endedRuns = (actionChainId: string) =>
    eventually(async () => {
      const runs = ok(
        await suite.client.GET('/orgs/{organizationId}/chains/{actionChainId}/runs', {
          params: { path: { ...suite.inOrg, actionChainId } },
        }),
      );
      return runs.items.some((r) => r.status === 'success' || r.status === 'failed') ? runs.items : undefined;
    }, 60_000);

  it('Action chains: ordered, LLM-driven steps with typed input and output schemas, and asynchronous runs', async () => {
    const { client, inOrg } = suite;
    const chain = await echoChain();
    const started = ok(
      await client.POST('/orgs/{organizationId}/chains/{actionChainId}/run', {
        params: { path: { ...inOrg, actionChainId: chain.actionChainId } },
        body: { payload: { message: 'ping' } },
      }),
    );
    const [run] = await endedRuns(chain.actionChainId);
    expect(run).to.include({ runId: started.runId, status: 'success' });
    expect(run!.state).to.deep.equal({ input: { message: 'ping' }, reply: 'echo: Echo ping' });
  });

  it('a POST to a webhook’s execute endpoint runs all its handlers', async () => {
    const { baseUrl, client, inOrg } = suite;
    const chain = await echoChain();
    const webhook = ok(
      await client.POST('/orgs/{organizationId}/webhooks', {
        params: { path: inOrg },
        body: { name: 'Inbox' },
      }),
    );
    const inWebhook = { ...inOrg, webhookId: webhook.webhookId };
    ok(
      await client.POST('/orgs/{organizationId}/webhooks/{webhookId}/handlers', {
        params: { path: inWebhook },
        body: {
          handlerType: 'action-chain',
          actionChainId: chain.actionChainId,
          instructions: 'Echo the text',
          inputMapping: { message: '{{body.text}}' },
        },
      }),
    );
    // "no authentication": a client without credentials
    const anonymous = createClient({ baseUrl, token: '' });
    ok(
      await anonymous.POST('/orgs/{organizationId}/webhooks/{webhookId}/execute', {
        params: { path: inWebhook },
        body: { text: 'hook' },
      }),
    );
    const [run] = await endedRuns(chain.actionChainId);
    expect(run).to.include({ status: 'success', triggerType: 'webhook' });
    expect(run!.state).to.deep.include({ reply: 'echo: Echo hook' });
    const deliveries = ok(
      await client.GET('/orgs/{organizationId}/webhooks/{webhookId}/deliveries', {
        params: { path: inWebhook },
      }),
    );
    expect(deliveries.items).to.have.length(1);
  });

  it('Schedules: cron triggers with handlers that run an agent, action chain or workflow', async () => {
    const { client, inOrg } = suite;
    const chain = await echoChain();
    const trigger = ok(
      await client.POST('/orgs/{organizationId}/schedules', {
        params: { path: inOrg },
        body: { name: 'Nightly', cronExpression: '30 2 * * *' },
      }),
    );
    const inTrigger = { ...inOrg, triggerId: trigger.triggerId };
    const handler = ok(
      await client.POST('/orgs/{organizationId}/schedules/{triggerId}/handlers', {
        params: { path: inTrigger },
        body: {
          handlerType: 'action-chain',
          actionChainId: chain.actionChainId,
          instructions: 'Echo nightly',
          inputMapping: { message: 'nightly' },
        },
      }),
    );
    // "returns ScheduleHandlerView with names filled in"
    expect(handler).to.include({ actionChainId: chain.actionChainId, actionChainName: 'Echo' });
    const summary = ok(
      await client.GET('/orgs/{organizationId}/schedules/{triggerId}/runs', { params: { path: inTrigger } }),
    );
    expect(summary.lastRun).to.equal(null);
    const next = new Date(summary.nextRun!);
    expect([next.getUTCHours(), next.getUTCMinutes()]).to.deep.equal([2, 30]);
    expect(next.getTime()).to.be.greaterThan(Date.now());
  });

  it('Artifacts and Apps: HTML artifacts can be pinned as Apps and their declared manifest approved', async () => {
    const { org, baseUrl, client, inOrg } = suite;
    ok(
      await client.POST('/orgs/{organizationId}/tables', {
        params: { path: inOrg },
        body: {
          name: 'leads',
          fields: [{ name: 'title', type: 'text', required: true, comments: 'a lead' }],
        },
      }),
    );
    ok(
      await client.POST('/orgs/{organizationId}/tables/{tableName}/data', {
        params: { path: { ...inOrg, tableName: 'leads' } },
        body: { data: { title: 'Ada' } },
      }),
    );
    const manifest = { workflows: [], tables: [{ table: 'leads', access: 'read' }] };
    const { artifact } = ok(
      await client.POST('/orgs/{organizationId}/artifacts', {
        params: { path: inOrg },
        body: { name: 'Leads app', contentType: 'text/html', content: appHtml(manifest) },
      }),
    );
    const inArtifact = { ...inOrg, artifactId: artifact.artifactId };
    const pinned = ok(
      await client.PUT('/orgs/{organizationId}/artifacts/{artifactId}/pin', { params: { path: inArtifact } }),
    );
    expect(pinned.artifact.pinnedAt).to.be.a('string');
    const read = ok(
      await client.GET('/orgs/{organizationId}/artifacts/{artifactId}/app-manifest', {
        params: { path: inArtifact },
      }),
    );
    expect(read).to.deep.include({ declared: manifest, approved: null });
    const approved = ok(
      await client.PUT('/orgs/{organizationId}/artifacts/{artifactId}/app-manifest', {
        params: { path: inArtifact },
      }),
    );
    expect(approved).to.deep.include({ manifest, approvedBy: org.owner.userId });

    // the running app calls the bridge with its session token, through the same client
    const session = ok(
      await client.POST('/orgs/{organizationId}/artifacts/{artifactId}/app-session', {
        params: { path: inArtifact },
      }),
    );
    const app = createClient({ baseUrl, token: new URL(session.url).searchParams.get('session')! });
    const rows = ok(
      await app.GET('/orgs/{organizationId}/artifacts/{artifactId}/app/tables/{tableName}/rows', {
        params: { path: { ...inArtifact, tableName: 'leads' } },
      }),
    );
    expect(rows.items.map((r) => r.title)).to.deep.equal(['Ada']);
  });
});
