import { expect } from 'chai';
import type { ChatRequest } from '@test/helpers/llm';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { as, addMember, createTestOrg } from '@test/helpers/org';
import { download, publish, uploadArtifact } from '@test/helpers/artifacts';
import { createRunnableChain, runToEnd, userText } from '@test/helpers/chains';
import { createKb, search, settled } from '@test/helpers/kb';
import { eventually } from '@test/helpers/wait';
import { invalidReference } from '@test/helpers/errors';

const toolResults = (body: ChatRequest) => body.messages.filter((m) => m.role === 'tool');

describe('artifacts with the worker: agent tools in turns, sending to a knowledge base', function () {
  this.timeout(120_000);
  const suite = useWorkerAndOrg('Artifact Workflows Org');

  it('lets an agent create and update an artifact in a conversation turn; the conversation’s creator owns it', async () => {
    const { env, org } = suite;
    // every member may use every agent
    await as(env, org.owner.token)
      .post(org.path('/groups'), {
        name: 'All',
        description: 'all agents',
        isDefault: true,
        fullAccess: true,
      })
      .expect(201);
    const model = `artifact-tools-${org.organizationId}`;
    const agent = await as(env, org.admin.token)
      .post(org.path('/agents'), { name: 'Writer', description: 'd', instructions: 'Write plans.', model })
      .expect(201);
    const agentId = agent.body.id as string;
    for (const toolCode of ['create_artifact', 'update_artifact'])
      await as(env, org.admin.token)
        .post(org.path(`/agents/${agentId}/tools`), { toolCode })
        .expect(201);

    env.llm.on({ model }, (body) => {
      const results = toolResults(body);
      if (results.length === 0)
        return {
          toolCalls: [
            {
              name: 'create_artifact',
              arguments: { name: 'Plan', contentType: 'text/markdown', content: '# plan v1' },
            },
          ],
        };
      if (results.length === 1) {
        const created = JSON.parse(results[0]!.content as string) as { artifactId: string };
        return {
          toolCalls: [
            { name: 'update_artifact', arguments: { artifactId: created.artifactId, content: '# plan v2' } },
          ],
        };
      }
      return { content: `done: ${results[1]!.content as string}` };
    });
    const started = await as(env, org.chat.token)
      .post(org.path('/conversations'), { agentId, message: 'Write me a plan' })
      .expect(201);
    const conversationId = started.body.conversationId as string;
    const reply = await eventually(async () => {
      const conv = await as(env, org.chat.token).get(org.path(`/conversations/${conversationId}`));
      const messages = conv.body.messages as
        Array<{ role: string; content: Array<{ text: string }> }> | undefined;
      return messages?.find((m) => m.role === 'assistant');
    }, 60_000);
    expect(reply.content[0]!.text).to.match(/^done: .*"version":2/);
    // the model saw both tools
    const request = env.llm.chatRequests.find((r) => r.model === model)!;
    const names = request.tools?.map((t) => (t as { function: { name: string } }).function.name);
    expect(names).to.include.members(['create_artifact', 'update_artifact']);

    const listed = await as(env, org.chat.token)
      .get(org.path(`/artifacts?conversationId=${conversationId}`))
      .expect(200);
    expect(listed.body.items).to.have.length(1);
    const artifact = listed.body.items[0];
    expect(artifact).to.deep.include({
      name: 'Plan',
      scope: 'conversation',
      source: 'conversation',
      conversationId,
      creatorUserId: org.chat.userId,
      versionCount: 2,
      contentType: 'text/markdown',
    });
    expect(artifact.currentVersion).to.deep.include({ agentId, createdBy: org.chat.userId, version: 2 });
    expect((await download(env, org, org.chat.token, artifact.artifactId as string)).text).to.equal(
      '# plan v2',
    );
    const stranger = await addMember(env, org.organizationId, 'chat', 'Stranger');
    await as(env, stranger.token)
      .get(org.path(`/artifacts/${artifact.artifactId}`))
      .expect(404);
  });

  it('writes once per tool call (a retried activity finds its artifact and version) and only in its conversation', async () => {
    const { env, org } = suite;
    const tenant = env.deps.repos.tenant(org.organizationId);
    const conversation = async (requestId: string) =>
      tenant.conversations.createForRequest(requestId, {
        agentId: 'default-assistant',
        title: 't',
        creatorUserId: org.chat.userId,
        isBrowserTask: false,
      });
    const first = await conversation('req-a');
    const second = await conversation('req-b');
    const call = (conversationId: string, toolCallId: string) => ({
      organizationId: org.organizationId,
      agentId: 'default-assistant',
      conversationId,
      userId: org.chat.userId,
      requestId: 'req-a',
      toolCallId,
    });
    const tools = env.deps.services.toolArtifacts;
    const args = { name: 'Doc', contentType: 'text/plain', content: 'one' };
    const made = await tools.create(call(first._id, 'c1'), args);
    expect(await tools.create(call(first._id, 'c1'), args)).to.deep.equal(made);
    const updated = await tools.update(call(first._id, 'c2'), {
      artifactId: made.artifactId,
      content: 'two',
    });
    expect(
      await tools.update(call(first._id, 'c2'), { artifactId: made.artifactId, content: 'two' }),
    ).to.deep.equal(updated);
    expect(updated.version).to.equal(2);
    const stored = await tenant.artifacts.get(made.artifactId);
    expect(stored?.versionCount).to.equal(2);
    await tools.update(call(second._id, 'c3'), { artifactId: made.artifactId, content: 'x' }).then(
      () => expect.fail('an artifact of another conversation was updated'),
      (err: { status?: number }) => expect(err.status).to.equal(404),
    );
    await tools.create(call('cnv_missing', 'c4'), args).then(
      () => expect.fail('an artifact was written into a conversation that does not exist'),
      (err: { status?: number }) => expect(err.status).to.equal(404),
    );
    // a chain step reaches only its own run's artifacts, and only runs that exist
    const stepCall = {
      organizationId: org.organizationId,
      agentId: 'chain:chn_x',
      chainRun: { actionChainId: 'chn_x', runId: 'run_missing' },
      userId: org.chat.userId,
      requestId: 'req-a',
      toolCallId: 'c5',
    };
    await tools.update(stepCall, { artifactId: made.artifactId, content: 'x' }).then(
      () => expect.fail('a chain step updated a conversation artifact'),
      (err: { status?: number }) => expect(err.status).to.equal(404),
    );
    await tools.create(stepCall, args).then(
      () => expect.fail('an artifact was written into a chain run that does not exist'),
      (err: { status?: number }) => expect(err.status).to.equal(404),
    );
  });

  it('lets a chain step write artifacts into its run, one per fan-out element even when call ids repeat', async () => {
    const { env, org } = suite;
    const chain = await createRunnableChain(env, org, [
      {
        stepOrder: 1,
        name: 'write',
        forEachElement: '$.input.topics',
        instructions: 'Write a note about {{element}}',
        outputSchema: {
          type: 'object',
          properties: { artifactId: { type: 'string' } },
          required: ['artifactId'],
        },
      },
    ]);
    await as(env, org.admin.token)
      .post(org.path(`/chains/${chain.chainId}/steps/${chain.stepIds[0]}/tools`), {
        toolCode: 'create_artifact',
        config: {},
      })
      .expect(201);
    chain.answer((body) => {
      const results = toolResults(body);
      const topic = /about (\w+)/.exec(userText(body))![1]!;
      // every element's model uses the same tool call id: the elements must not share one artifact
      if (!results.length)
        return {
          toolCalls: [
            {
              id: 'call_same',
              name: 'create_artifact',
              arguments: { name: `Note ${topic}`, contentType: 'text/markdown', content: `# ${topic}` },
            },
          ],
        };
      const made = JSON.parse(results[0]!.content as string) as { artifactId: string };
      return { content: JSON.stringify({ artifactId: made.artifactId }) };
    });
    const run = await runToEnd(env, org, chain.chainId, { topics: ['tides', 'winds'] });
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    const ids = run.state.artifactId as string[];
    expect(new Set(ids).size).to.equal(2);

    const listed = await as(env, org.chat.token)
      .get(org.path(`/artifacts?chainRunId=${run.runId}`))
      .expect(200);
    expect(listed.body.items.map((a: { artifactId: string }) => a.artifactId)).to.have.members(ids);
    for (const a of listed.body.items)
      expect(a).to.deep.include({
        scope: 'chain-run',
        source: 'chain-run',
        chainRunId: run.runId,
        actionChainId: chain.chainId,
        conversationId: null,
        // the member who started the run owns what its steps write
        creatorUserId: org.chat.userId,
      });
    const byName = Object.fromEntries(
      listed.body.items.map((a: { name: string; artifactId: string }) => [a.name, a.artifactId]),
    );
    expect((await download(env, org, org.chat.token, byName['Note winds'] as string)).text).to.equal(
      '# winds',
    );
    const stranger = await addMember(env, org.organizationId, 'chat', 'Stranger');
    await as(env, stranger.token)
      .get(org.path(`/artifacts/${ids[0]}`))
      .expect(404);
    // promoted into the library, it still says which run wrote it
    const promoted = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${ids[0]}/promote`), {})
      .expect(200);
    expect(promoted.body.artifact).to.deep.include({ scope: 'library', chainRunId: run.runId });
  });

  it('sends a version to a knowledge base, where it is ingested like an upload and found by search', async () => {
    const { env, org } = suite;
    const kb = await createKb(env, org, { title: 'Notes' });
    const a = await uploadArtifact(env, org, org.admin.token, {
      name: 'Lease notes',
      contentType: 'text/markdown',
      content: '# Lease\n\nThe rent is paid on the first day of every month.',
    });
    await publish(env, org, org.admin.token, a.artifactId, '# Draft\n\nNothing to see.', 'text/markdown');
    const sent = await as(env, org.admin.token)
      .post(org.path(`/artifacts/${a.artifactId}/send-to-knowledge-base`), {
        knowledgeBaseId: kb,
        versionId: a.currentVersion.versionId,
      })
      .expect(201);
    expect(sent.body).to.deep.include({
      knowledgeBaseId: kb,
      fileName: 'Lease_notes.md',
      contentType: 'text/markdown',
      status: 'ENQUEUED',
      creatorUserId: org.admin.userId,
    });
    const file = await settled(env, org, kb, sent.body.fileId as string);
    expect(file.status, file.statusMessage ?? '').to.equal('READY');
    const hits = await search(env, org, kb, 'when is the rent paid');
    expect(hits[0]).to.deep.include({ fileName: 'Lease_notes.md' });
    expect(hits[0]!.text).to.contain('first day of every month');

    // the knowledge base's own rules: a chat member may not add to an organization knowledge base
    await as(env, org.admin.token)
      .put(org.path(`/artifacts/${a.artifactId}/share`), { userIds: [org.chat.userId] })
      .expect(200);
    const refused = await as(env, org.chat.token)
      .post(org.path(`/artifacts/${a.artifactId}/send-to-knowledge-base`), { knowledgeBaseId: kb })
      .expect(403);
    expect(refused.body.error.message).to.contain('knowledge base');
    const binary = await uploadArtifact(env, org, org.admin.token, {
      name: 'blob',
      contentType: 'application/octet-stream',
      contentBase64: 'AAEC',
    });
    const unsupported = await as(env, org.admin.token)
      .post(org.path(`/artifacts/${binary.artifactId}/send-to-knowledge-base`), { knowledgeBaseId: kb })
      .expect(400);
    expect(unsupported.body.error.message).to.contain('unsupported file type');
    await as(env, org.admin.token)
      .post(org.path(`/artifacts/${a.artifactId}/send-to-knowledge-base`), { knowledgeBaseId: 'kb_missing' })
      .expect(invalidReference('knowledgeBaseId'));
    const other = await createTestOrg(env, 'Other KB Org');
    const theirs = await createKb(env, other);
    await as(env, org.admin.token)
      .post(org.path(`/artifacts/${a.artifactId}/send-to-knowledge-base`), { knowledgeBaseId: theirs })
      .expect(invalidReference('knowledgeBaseId'));
    // the artifact is named in the path: another organization's member finds no such artifact
    await as(env, other.admin.token)
      .post(other.path(`/artifacts/${a.artifactId}/send-to-knowledge-base`), { knowledgeBaseId: theirs })
      .expect(404);
  });
});
