import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import {
  connectRealtime,
  createClient,
  type AgentWorkspaceClient,
  type ConversationEvent,
  type ToolUpdateEvent,
} from '../clients/typescript/src';
import { appHtml } from './helpers/artifacts';
import { systemText } from './helpers/chains';
import type { TestEnv } from './helpers/env';
import type { TestOrg } from './helpers/org';
import { eventually } from './helpers/wait';
import { useWorkerAndOrg } from './helpers/worker';

/** The data of a call that succeeded; a call that failed fails the test with the server's error. */
function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  expect(result.error, `${result.response.status} ${JSON.stringify(result.error)}`).to.equal(undefined);
  return result.data as T;
}

// One flow per feature area, each only through the client generated from openapi.yaml (clients/typescript), as a
// user of the contract would write it: a request or response the contract describes wrongly fails here.
describe('the generated TypeScript client against the running service', function () {
  this.timeout(180_000);
  const suite = useWorkerAndOrg('Client Org');
  let env: TestEnv;
  let org: TestOrg;
  let baseUrl: string;
  let client: AgentWorkspaceClient;
  /** the organization as the `organizationId` path parameter */
  let inOrg: { organizationId: string };
  beforeEach(async () => {
    ({ env, org } = suite);
    baseUrl = (await env.listen()).url;
    client = createClient({ baseUrl, token: org.owner.token });
    inOrg = { organizationId: org.organizationId };
  });

  it('POST {org}/conversations with a message causes the reply to arrive on the WebSocket, correlated by requestId', async () => {
    const model = `client-model-${randomBytes(4).toString('hex')}`;
    const agent = ok(
      await client.POST('/orgs/{organizationId}/agents', {
        params: { path: inOrg },
        body: { name: 'Greeter', description: 'Says hello', instructions: 'Greet.', model },
      }),
    );
    env.llm.on({ model }, { content: 'Hello, Olive!', chunks: ['Hello', ', ', 'Olive!'] });
    const socket = await connectRealtime({
      baseUrl,
      token: org.owner.token,
      organizationId: org.organizationId,
    });
    try {
      const events: ConversationEvent[] = [];
      socket.on('conversation', (e) => events.push(e));
      const turn = ok(
        await client.POST('/orgs/{organizationId}/conversations', {
          params: { path: inOrg },
          body: { agentId: agent.id, message: 'Hi, I am Olive' },
        }),
      );
      const final = await eventually(
        () => events.find((e) => e.requestId === turn.requestId && e.type === 'message'),
        60_000,
      );
      const deltas = events.filter((e) => e.requestId === turn.requestId && e.type === 'delta');
      expect(deltas.map((e) => (e.type === 'delta' ? e.text : '')).join('')).to.equal('Hello, Olive!');
      expect(final.type === 'message' && final.message.content[0]?.text).to.equal('Hello, Olive!');

      const stored = ok(
        await client.GET('/orgs/{organizationId}/conversations/{conversationId}', {
          params: { path: { ...inOrg, conversationId: turn.conversationId } },
        }),
      );
      expect(stored.messages.map((m) => [m.role, m.content[0]?.text])).to.deep.equal([
        ['user', 'Hi, I am Olive'],
        ['assistant', 'Hello, Olive!'],
      ]);
    } finally {
      socket.close();
    }
  });

  it('tool-update (tool execution status): a server tool the agent calls is shown running, then completed', async () => {
    const model = `client-model-${randomBytes(4).toString('hex')}`;
    const agent = ok(
      await client.POST('/orgs/{organizationId}/agents', {
        params: { path: inOrg },
        body: { name: 'Clock', description: 'Tells the time', instructions: 'Use tools.', model },
      }),
    );
    ok(
      await client.POST('/orgs/{organizationId}/agents/{agentId}/tools', {
        params: { path: { ...inOrg, agentId: agent.id } },
        body: { toolCode: 'current_time' },
      }),
    );
    let calls = 0;
    env.llm.on({ model }, () =>
      calls++ === 0
        ? { toolCalls: [{ id: 'call_1', name: 'current_time', arguments: '{}' }] }
        : { content: 'It is now.' },
    );
    const socket = await connectRealtime({
      baseUrl,
      token: org.owner.token,
      organizationId: org.organizationId,
    });
    try {
      const updates: ToolUpdateEvent[] = [];
      socket.on('tool-update', (e) => updates.push(e));
      const turn = ok(
        await client.POST('/orgs/{organizationId}/conversations', {
          params: { path: inOrg },
          body: { agentId: agent.id, message: 'What time is it?' },
        }),
      );
      await eventually(
        () => updates.find((u) => u.requestId === turn.requestId && u.status === 'completed'),
        60_000,
      );
      expect(
        updates.filter((u) => u.requestId === turn.requestId).map((u) => [u.name, u.toolCallId, u.status]),
      ).to.deep.equal([
        ['current_time', 'call_1', 'running'],
        ['current_time', 'call_1', 'completed'],
      ]);
    } finally {
      socket.close();
    }
  });

  it('Custom tables: user-defined structured tables with typed fields, filtered and sorted row listing, row CRUD and batch insert', async () => {
    const table = { ...inOrg, tableName: 'orders' };
    ok(
      await client.POST('/orgs/{organizationId}/tables', {
        params: { path: inOrg },
        body: {
          name: 'orders',
          fields: [
            { name: 'customer', type: 'text', required: true, comments: 'who ordered' },
            { name: 'total', type: 'numeric', required: true, comments: 'in euros' },
          ],
        },
      }),
    );
    const batch = ok(
      await client.POST('/orgs/{organizationId}/tables/{tableName}/data/batch', {
        params: { path: table },
        body: {
          data: [
            { customer: 'Ada', total: 30 },
            { customer: 'Grace', total: 'not a number' },
            { customer: 'Linus', total: 12 },
          ],
        },
      }),
    );
    expect(batch).to.deep.include({ inserted: 2, failed: 1 });
    expect(batch.errors.map((e) => e.index)).to.deep.equal([1]);
    const row = ok(
      await client.POST('/orgs/{organizationId}/tables/{tableName}/data', {
        params: { path: table },
        body: { data: { customer: 'Barbara', total: 50 } },
      }),
    );
    expect(row.id).to.be.a('number');
    const page = ok(
      await client.GET('/orgs/{organizationId}/tables/{tableName}/data', {
        params: { path: table, query: { filters: 'total:gte:20:and', orderBy: 'total:desc' } },
      }),
    );
    expect(page.totalRows).to.equal(2);
    expect(page.items.map((r) => r.customer)).to.deep.equal(['Barbara', 'Ada']);
  });

  it('Knowledge bases: stores of uploaded files that are parsed and embedded automatically, with semantic search', async () => {
    const kb = ok(
      await client.POST('/orgs/{organizationId}/knowledgebases', {
        params: { path: inOrg },
        body: { title: 'Lease', llmDescription: 'the lease', type: 'ORGANIZATION' },
      }),
    );
    const inKb = { ...inOrg, knowledgeBaseId: kb.knowledgeBaseId };
    const text = 'The tenant pays rent on the first day of each month.';
    const file = ok(
      await client.POST('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/files/upload-url', {
        params: { path: inKb },
        body: { fileName: 'lease.txt', contentType: 'text/plain' },
      }),
    );
    expect(file.status).to.equal('WAITING-UPLOAD');
    // the bytes go to the signed URL, not through the API
    const put = await fetch(file.uploadUrl, {
      method: 'PUT',
      headers: { 'Content-Type': 'text/plain' },
      body: text,
    });
    expect(put.status).to.equal(200);
    const ready = await eventually(async () => {
      const read = ok(
        await client.GET('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/files/{fileId}', {
          params: { path: { ...inKb, fileId: file.fileId } },
        }),
      );
      return read.status === 'READY' || read.status === 'ERROR' ? read : undefined;
    }, 60_000);
    expect(ready.status).to.equal('READY');
    const hits = ok(
      await client.GET('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/search', {
        params: { path: inKb, query: { q: 'when is the rent due' } },
      }),
    );
    expect(hits.items[0]).to.include({ fileId: file.fileId, fileName: 'lease.txt', text });
  });

  /** A one-step chain whose step answers `{ reply }` for `{ message }`; the scripted model echoes the message. */
  async function echoChain() {
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
        await client.GET('/orgs/{organizationId}/chains/{actionChainId}/runs', {
          params: { path: { ...inOrg, actionChainId } },
        }),
      );
      return runs.items.some((r) => r.status === 'success' || r.status === 'failed') ? runs.items : undefined;
    }, 60_000);

  it('Action chains: ordered, LLM-driven steps with typed input and output schemas, and asynchronous runs', async () => {
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
