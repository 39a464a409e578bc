import { expect } from 'chai';
import type { ConversationEvent, ToolUpdateEvent } from '@client';
import { connectOwner, createScriptedAgent, ok, useClientAndOrg } from '@test/helpers/client';
import { eventually } from '@test/helpers/wait';

// One flow per feature area, each only through the client generated from openapi.yaml (clients/typescript), as a
// user of the contract would write it: a request or response the contract describes wrongly fails here.
// Conversations and data here; automation (chains, webhooks, schedules, apps) in client-automation.test.ts.
describe('the generated TypeScript client: conversations, tables, knowledge bases', function () {
  this.timeout(180_000);
  const suite = useClientAndOrg('Client Org');

  it('POST {org}/conversations with a message causes the reply to arrive on the WebSocket, correlated by requestId', async () => {
    const { client, inOrg } = suite;
    const agent = await createScriptedAgent(suite, {
      content: 'Hello, Olive!',
      chunks: ['Hello', ', ', 'Olive!'],
    });
    const socket = await connectOwner(suite);
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
    const { client, inOrg } = suite;
    let calls = 0;
    const agent = await createScriptedAgent(suite, () =>
      calls++ === 0
        ? { toolCalls: [{ id: 'call_1', name: 'current_time', arguments: '{}' }] }
        : { content: 'It is now.' },
    );
    ok(
      await client.POST('/orgs/{organizationId}/agents/{agentId}/tools', {
        params: { path: { ...inOrg, agentId: agent.id } },
        body: { toolCode: 'current_time' },
      }),
    );
    const socket = await connectOwner(suite);
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
    const { client, inOrg } = suite;
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
    const { client, inOrg } = suite;
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
});
