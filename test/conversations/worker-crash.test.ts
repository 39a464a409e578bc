import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { workflowIds } from '@contracts';
import { createTestAgent } from '@test/helpers/agents';
import { testEnv } from '@test/helpers/env';
import { as, createTestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { eventually } from '@test/helpers/wait';
import { startWorkerProcess } from '@test/helpers/worker-process';

describe('a worker killed in the middle of a turn', () => {
  const workers: ChildProcess[] = [];
  after(() => workers.forEach((w) => w.kill('SIGKILL')));

  it('is replaced by another worker and the reply still arrives exactly once', async function () {
    this.timeout(180_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'Crash Org');
    const { agentId, model } = await createTestAgent(env, org.organizationId);
    const chunks = Array.from({ length: 30 }, (_, i) => `w${i} `);
    env.llm.on({ model }, { content: chunks.join(''), chunks, chunkDelayMs: 150 });

    // API in this process, worker in another: events travel worker → Redis → socket.io → client.
    const client = await connectClient(env, org.organizationId, org.owner.token);
    const first = startWorkerProcess(env);
    workers.push(first);
    try {
      const res = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId, message: 'long answer please' })
        .expect(201);
      const { requestId, conversationId } = res.body;
      await client.waitFor(
        (e) => e.payload.requestId === requestId && e.payload.type === 'delta' && e.payload.seq === 3,
        90_000,
      );
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      const deltasBefore = client.turn(requestId).filter((e) => e.payload.type === 'delta').length;
      expect(deltasBefore).to.be.lessThan(chunks.length);

      workers.push(startWorkerProcess(env));
      const final = await client.waitFor(
        (e) => e.payload.requestId === requestId && e.payload.type === 'message',
        120_000,
      );
      expect(
        (final.payload as { message: { content: Array<{ text: string }> } }).message.content[0]!.text,
      ).to.equal(chunks.join(''));

      const retried = client
        .turn(requestId)
        .filter((e) => e.payload.type === 'delta' && Number(e.payload.attempt) > 1);
      expect(retried.map((e) => e.payload.text).join('')).to.equal(chunks.join(''));
      const stored = await eventually(async () => {
        const conv = await as(env, org.owner.token)
          .get(org.path(`/conversations/${conversationId}`))
          .expect(200);
        const messages = conv.body.messages as Array<{ role: string }>;
        return messages.length === 2 && messages;
      });
      expect(stored.map((m) => m.role)).to.deep.equal(['user', 'assistant']);
      expect(env.llm.chatRequests.filter((r) => r.model === model)).to.have.length(2);
      const handle = env.deps.temporal.client.workflow.getHandle(
        workflowIds.turn(org.organizationId, conversationId, requestId),
      );
      expect((await handle.result()).status).to.equal('complete');
    } finally {
      client.close();
    }
  });
});
