import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { ArtifactToolCall } from '@lib/artifacts/tool-artifacts.service';
import { artifactsWorld, ctxOf, ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * The agent tools create_artifact / update_artifact (docs/artifacts-and-apps.md, "Agent tools"): ids derive from
 * the turn's request and the tool call, so a retried activity writes once; a chain step writes into its run
 * (owned by who started it) and update_artifact reaches only that run's, or that conversation's, artifacts.
 */
// lib/ids.ts derivedId, written out: `<prefix>_` + the first 22 base64url characters of SHA-256 of the parts.
const derived = (prefix: string, parts: string[]) =>
  `${prefix}_${createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 22)}`;

const inConversation: ArtifactToolCall = {
  organizationId: ORG,
  agentId: 'agt_1',
  userId: 'usr_alice',
  requestId: 'req_1',
  toolCallId: 'call_1',
  conversationId: 'conv_1',
};
const inRun: ArtifactToolCall = {
  organizationId: ORG,
  agentId: 'chain:chn_1',
  userId: 'usr_alice',
  requestId: 'req_1',
  toolCallId: 'call_1',
  chainRun: { actionChainId: 'chn_1', runId: 'run_1' },
};
const html = { contentType: 'text/html', content: '<p>draft</p>' };

describe('tool artifacts', () => {
  let w: ArtifactsWorld;
  beforeEach(() => {
    w = artifactsWorld();
    w.conversations.push([ORG, 'conv_1'], [ORG, 'conv_2']);
    w.runs.push({ organizationId: ORG, _id: 'run_1', actionChainId: 'chn_1' });
    w.runs.push({ organizationId: ORG, _id: 'run_2', actionChainId: 'chn_1' });
  });

  it('creates a conversation artifact under ids derived from the call, once however often retried', async () => {
    const key = [ORG, 'conv_1', 'req_1', 'call_1'];
    const expected = {
      artifactId: derived('art', key),
      name: 'Draft',
      versionId: derived('ver', key),
      version: 1,
      contentType: 'text/html',
      sizeBytes: 12,
    };
    expect(await w.tools.create(inConversation, { name: ' Draft ', ...html })).to.deep.equal(expected);
    expect(await w.tools.create(inConversation, { name: 'Other', ...html })).to.deep.equal(expected);
    expect(w.docs.size).to.equal(1);
    const doc = w.docs.get(expected.artifactId)!;
    expect(doc).to.deep.include({
      scope: 'conversation',
      source: 'conversation',
      conversationId: 'conv_1',
      creatorUserId: 'usr_alice',
    });
    expect(doc.versions[0]).to.deep.include({ createdBy: 'usr_alice', agentId: 'agt_1' });
    // another tool call of the same turn is another artifact
    const second = await w.tools.create({ ...inConversation, toolCallId: 'call_2' }, { name: 'B', ...html });
    expect(second.artifactId).to.equal(derived('art', [ORG, 'conv_1', 'req_1', 'call_2']));
  });

  it('creates a chain-run artifact owned by who started the run, keyed by the run', async () => {
    const key = [ORG, 'run:run_1', 'req_1', 'call_1'];
    const made = await w.tools.create(inRun, { name: 'Report', ...html });
    expect(made.artifactId).to.equal(derived('art', key));
    expect(made.versionId).to.equal(derived('ver', key));
    expect(w.docs.get(made.artifactId)).to.deep.include({
      scope: 'chain-run',
      source: 'chain-run',
      conversationId: null,
      chainRunId: 'run_1',
      actionChainId: 'chn_1',
      creatorUserId: 'usr_alice',
    });
    // it is alice's: she reads it, another member does not until it is shared
    expect((await w.artifacts.get(ctxOf('chat', 'usr_alice'), made.artifactId)).artifact.name).to.equal(
      'Report',
    );
    expect(await refusal(w.artifacts.get(ctxOf('chat', 'usr_bob'), made.artifactId))).to.deep.include({
      status: 404,
    });
  });

  it('refuses an unknown conversation or run, a bad name, and writes nothing', async () => {
    expect(
      await refusal(w.tools.create({ ...inConversation, conversationId: 'conv_9' }, { name: 'x', ...html })),
    ).to.deep.include({ status: 404, message: 'conversation not found' });
    const otherRun = { ...inRun, chainRun: { actionChainId: 'chn_1', runId: 'run_9' } };
    expect(await refusal(w.tools.create(otherRun, { name: 'x', ...html }))).to.deep.include({
      status: 404,
      message: 'chain run not found',
    });
    expect(
      await refusal(w.tools.create({ ...inRun, organizationId: 'org_b' }, { name: 'x', ...html })),
    ).to.deep.include({
      message: 'chain run not found',
    });
    expect(await refusal(w.tools.create(inConversation, { name: '', ...html }))).to.deep.include({
      status: 400,
    });
    expect(w.docs.size).to.equal(0);
    expect(w.objects.bytes.size).to.equal(0);
  });

  it('updates an artifact of the same conversation once per tool call, keeping its content type', async () => {
    const made = await w.tools.create(inConversation, { name: 'Draft', ...html });
    const call = { ...inConversation, requestId: 'req_2' };
    const expected = {
      artifactId: made.artifactId,
      name: 'Draft',
      versionId: derived('ver', [ORG, 'conv_1', 'req_2', 'call_1']),
      version: 2,
      contentType: 'text/html',
      sizeBytes: 2,
    };
    expect(await w.tools.update(call, { artifactId: made.artifactId, content: 'v2' })).to.deep.equal(
      expected,
    );
    expect(await w.tools.update(call, { artifactId: made.artifactId, content: 'v2' })).to.deep.equal(
      expected,
    );
    const renamed = await w.tools.update(
      { ...call, toolCallId: 'call_2' },
      { artifactId: made.artifactId, content: '# v3', contentType: 'text/markdown', name: ' Final ' },
    );
    expect(renamed).to.deep.include({ name: 'Final', version: 3, contentType: 'text/markdown' });
    expect(w.docs.get(made.artifactId)).to.deep.include({ nameKey: 'final', versionCount: 3 });
  });

  it('reaches only the artifacts of its own conversation or run', async () => {
    const fromConv = await w.tools.create(inConversation, { name: 'A', ...html });
    const fromRun = await w.tools.create(inRun, { name: 'B', ...html });
    const args = (artifactId: string) => ({ artifactId, content: 'x' });
    const conv2 = { ...inConversation, conversationId: 'conv_2' };
    const run2 = { ...inRun, chainRun: { actionChainId: 'chn_1', runId: 'run_2' } };
    const convMiss = {
      status: 404,
      code: 'not_found',
      message: 'artifact of this conversation not found',
      details: undefined,
    };
    const runMiss = {
      status: 404,
      code: 'not_found',
      message: 'artifact of this chain run not found',
      details: undefined,
    };
    expect(await refusal(w.tools.update(conv2, args(fromConv.artifactId)))).to.deep.equal(convMiss);
    expect(await refusal(w.tools.update(inConversation, args(fromRun.artifactId)))).to.deep.equal(convMiss);
    expect(await refusal(w.tools.update(inConversation, args('art_missing')))).to.deep.equal(convMiss);
    expect(await refusal(w.tools.update(run2, args(fromRun.artifactId)))).to.deep.equal(runMiss);
    expect(await refusal(w.tools.update(inRun, args(fromConv.artifactId)))).to.deep.equal(runMiss);
    expect(await refusal(w.tools.update(inRun, args('art_missing')))).to.deep.equal(runMiss);
    expect(await refusal(w.tools.update(inRun, { ...args(fromRun.artifactId), name: ' ' }))).to.deep.include({
      status: 400,
    });
    // a later tool call of the run (the create's own call id would name the create's version)
    expect(
      (await w.tools.update({ ...inRun, toolCallId: 'call_2' }, args(fromRun.artifactId))).version,
    ).to.equal(2);
    expect(w.docs.get(fromConv.artifactId)!.versionCount).to.equal(1);
  });
});
