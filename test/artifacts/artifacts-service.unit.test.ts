import { expect } from 'chai';
import { artifactsWorld, ctxOf, ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * The library as members use it (docs/artifacts-and-apps.md): upload, publish, get, rename, sharing,
 * promotion, download links and sending to a knowledge base. Pins and lists: artifacts-pins.unit.test.ts.
 */
const alice = ctxOf('chat', 'usr_alice');
const admin = ctxOf('admin', 'usr_admin');
const html = { contentType: 'text/html', content: '<h1>Leads</h1>' };

describe('artifacts service', () => {
  let w: ArtifactsWorld;
  beforeEach(() => {
    w = artifactsWorld();
    w.members.org_a = { usr_alice: 'chat', usr_bob: 'chat' };
  });

  describe('upload and publish', () => {
    it('uploads a library artifact with its first version, its bytes at the version key', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: '  Leads  ', ...html });
      expect(artifact).to.deep.include({
        organizationId: ORG,
        name: 'Leads',
        scope: 'library',
        source: 'upload',
        conversationId: null,
        chainRunId: null,
        creatorUserId: 'usr_alice',
        contentType: 'text/html',
        versionCount: 1,
        currentVersionApproved: false,
        pinnedAt: null,
      });
      const v = artifact.versions![0]!;
      expect(artifact.versions).to.have.length(1);
      expect(v).to.deep.include({ version: 1, sizeBytes: 14, createdBy: 'usr_alice', agentId: null });
      expect(artifact.currentVersion.versionId).to.equal(v.versionId);
      // ids carry their kind as a readable prefix (lib/ids.ts)
      expect(artifact.artifactId).to.match(/^art_[\w-]{16}$/);
      expect(v.versionId).to.match(/^ver_[\w-]{16}$/);
      const key = `artifacts/org_a/${artifact.artifactId}/${v.versionId}`;
      expect(w.objects.bytes.get(key)?.toString()).to.equal('<h1>Leads</h1>');
      expect(w.objects.puts).to.deep.equal([{ key, contentType: 'text/html' }]);
    });

    it('refuses a blank name or bad content before storing anything', async () => {
      expect(await refusal(w.artifacts.upload(alice, { name: '   ', ...html }))).to.deep.include({
        status: 400,
        message: 'name must be 1 to 500 characters after trimming; got 0',
      });
      expect(
        await refusal(w.artifacts.upload(alice, { name: 'x', contentType: 'text/html' })),
      ).to.deep.include({
        status: 400,
        message: 'give the content as exactly one of content (text) and contentBase64',
      });
      expect(w.docs.size).to.equal(0);
      expect(w.objects.bytes.size).to.equal(0);
    });

    it('publishes a new current version that starts unapproved', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
      const first = artifact.currentVersion.versionId;
      await w.repos.tenant(ORG).appApprovals.put({
        artifactId: artifact.artifactId,
        versionId: first,
        manifestWorkflows: [],
        manifestTables: [],
        manifestSha256: 'x',
        workflowBindings: [],
        approvedBy: 'usr_admin',
        approvedAt: new Date(),
      });
      expect((await w.artifacts.get(alice, artifact.artifactId)).artifact.currentVersionApproved).to.equal(
        true,
      );
      const published = await w.artifacts.publish(alice, artifact.artifactId, {
        contentType: 'text/plain',
        content: 'v2',
      });
      expect(published.artifact).to.deep.include({
        versionCount: 2,
        contentType: 'text/plain',
        currentVersionApproved: false,
      });
      expect(published.artifact.versions!.map((v) => v.version)).to.deep.equal([1, 2]);
      expect(published.artifact.versions![0]!.versionId).to.equal(first);
      expect(published.artifact.currentVersion).to.deep.include({ version: 2, sizeBytes: 2 });
      expect(published.artifact.currentVersion.versionId).to.match(/^ver_[\w-]{16}$/);
    });
  });

  describe('rename', () => {
    it('changes only the display name, trimmed, and refuses a name too long', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
      const renamed = await w.artifacts.rename(alice, artifact.artifactId, ' Q3 leads ');
      expect(renamed.artifact).to.deep.include({ name: 'Q3 leads', versionCount: 1 });
      expect(renamed.artifact).to.not.have.property('versions');
      expect(await refusal(w.artifacts.rename(alice, artifact.artifactId, 'x'.repeat(501)))).to.deep.include({
        status: 400,
        message: 'name must be 1 to 500 characters after trimming; got 501',
      });
      expect(
        (await w.artifacts.rename(alice, artifact.artifactId, 'y'.repeat(500))).artifact.name,
      ).to.have.length(500);
    });
  });

  describe('share', () => {
    it('replaces the share list with known members and groups, without repeats', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
      const id = artifact.artifactId;
      await w.artifacts.share(alice, id, { userIds: ['usr_bob', 'usr_bob'], groupIds: ['grp_sales'] });
      const again = await w.artifacts.share(alice, id, { groupIds: ['grp_default'] });
      expect(again.artifact.sharedWith).to.deep.equal({ userIds: [], groupIds: ['grp_default'] });
      const first = await w.artifacts.share(admin, id, { userIds: ['usr_bob', 'usr_bob'] });
      expect(first.artifact.sharedWith).to.deep.equal({ userIds: ['usr_bob'], groupIds: [] });
    });

    it('names every unknown member and group, and changes nothing', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
      const id = artifact.artifactId;
      await w.artifacts.share(alice, id, { userIds: ['usr_bob'] });
      // usr_eve is a member of another organization, grp_x a group there
      w.members.org_b = { usr_eve: 'chat' };
      expect(
        await refusal(
          w.artifacts.share(alice, id, {
            userIds: ['usr_eve', 'usr_bob', 'usr_zed'],
            groupIds: ['grp_x', 'grp_sales', 'grp_y'],
          }),
        ),
      ).to.deep.equal({
        status: 400,
        code: 'invalid_reference',
        message:
          'userIds: usr_eve, usr_zed are not members of this organization; groupIds: grp_x, grp_y do not exist',
        details: { unknownUsers: ['usr_eve', 'usr_zed'], unknownGroups: ['grp_x', 'grp_y'] },
      });
      expect(await refusal(w.artifacts.share(alice, id, { userIds: ['usr_zed'] }))).to.deep.include({
        message: 'userIds: usr_zed are not members of this organization',
        details: { unknownUsers: ['usr_zed'], unknownGroups: [] },
      });
      expect(await refusal(w.artifacts.share(alice, id, { groupIds: ['grp_x'] }))).to.deep.include({
        message: 'groupIds: grp_x do not exist',
        details: { unknownUsers: [], unknownGroups: ['grp_x'] },
      });
      expect((await w.artifacts.get(alice, id)).artifact.sharedWith).to.deep.equal({
        userIds: ['usr_bob'],
        groupIds: [],
      });
    });
  });

  describe('promote', () => {
    it('moves a conversation artifact to the library under a new name, once', async () => {
      w.conversations.push([ORG, 'conv_1']);
      const call = {
        organizationId: ORG,
        agentId: 'agt_1',
        userId: 'usr_alice',
        requestId: 'req_1',
        toolCallId: 'call_1',
        conversationId: 'conv_1',
      };
      const made = await w.tools.create(call, { name: 'Draft', ...html });
      expect(await refusal(w.artifacts.promote(alice, made.artifactId, { name: ' ' }))).to.deep.include({
        status: 400,
      });
      const { artifact } = await w.artifacts.promote(alice, made.artifactId, { name: 'Final' });
      expect(artifact).to.deep.include({
        artifactId: made.artifactId,
        scope: 'library',
        source: 'conversation',
        conversationId: 'conv_1',
        name: 'Final',
        promotedBy: 'usr_alice',
        versionCount: 1,
      });
      expect(artifact.promotedAt).to.be.a('string');
      expect(await refusal(w.artifacts.promote(alice, made.artifactId, {}))).to.deep.equal({
        status: 409,
        code: 'conflict',
        message: 'the artifact is already in the library',
        details: undefined,
      });
    });

    it('keeps the name when none is given', async () => {
      w.runs.push({ organizationId: ORG, _id: 'run_1', actionChainId: 'chn_1' });
      const call = {
        organizationId: ORG,
        agentId: 'chain:chn_1',
        userId: 'usr_alice',
        requestId: 'req_1',
        toolCallId: 'call_1',
        chainRun: { actionChainId: 'chn_1', runId: 'run_1' },
      };
      const made = await w.tools.create(call, { name: 'Run report', ...html });
      const { artifact } = await w.artifacts.promote(alice, made.artifactId, {});
      expect(artifact).to.deep.include({ name: 'Run report', scope: 'library', chainRunId: 'run_1' });
    });
  });

  describe('download link and knowledge base', () => {
    it('signs a one-hour link to the current version, or the named one', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Q3 report', ...html });
      const id = artifact.artifactId;
      const v1 = artifact.currentVersion.versionId;
      const v2 = (await w.artifacts.publish(alice, id, { contentType: 'text/markdown', content: '# Q3' }))
        .artifact.currentVersion.versionId;
      const before = Date.now();
      const current = await w.artifacts.downloadLink(alice, id);
      const after = Date.now();
      expect(current).to.deep.include({
        artifactId: id,
        versionId: v2,
        downloadLink: `https://s3.test/artifacts/org_a/${id}/${v2}?as=Q3_report.md`,
      });
      const expires = Date.parse(current.expiresAt);
      expect(expires).to.be.within(Math.floor(before / 1000) * 1000 + 3_600_000, after + 3_600_000);
      expect(w.objects.links[0]).to.deep.equal({
        key: `artifacts/org_a/${id}/${v2}`,
        fileName: 'Q3_report.md',
        opts: { expiresIn: 3600, contentType: 'text/markdown' },
      });
      expect((await w.artifacts.downloadLink(alice, id, v1)).downloadLink).to.equal(
        `https://s3.test/artifacts/org_a/${id}/${v1}?as=Q3_report.html`,
      );
      expect(await refusal(w.artifacts.downloadLink(alice, id, 'ver_nope'))).to.deep.include({
        status: 400,
        code: 'invalid_reference',
        message: 'versionId: ver_nope does not exist or is not visible to you',
      });
    });

    it('sends a version to a knowledge base as a file named after the artifact unless named', async () => {
      const { artifact } = await w.artifacts.upload(alice, { name: 'Leads', ...html });
      const id = artifact.artifactId;
      const v1 = artifact.currentVersion.versionId;
      await w.artifacts.sendToKnowledgeBase(alice, id, { knowledgeBaseId: 'kb_1' });
      await w.artifacts.sendToKnowledgeBase(alice, id, { knowledgeBaseId: 'kb_2', fileName: '  ' });
      await w.artifacts.sendToKnowledgeBase(alice, id, {
        knowledgeBaseId: 'kb_3',
        fileName: ' mine.html ',
        versionId: v1,
      });
      const source = { contentType: 'text/html', key: `artifacts/org_a/${id}/${v1}`, sizeBytes: 14 };
      expect(w.kbCalls.map((c) => [c.ctx.userId, c.knowledgeBaseId, c.source])).to.deep.equal([
        ['usr_alice', 'kb_1', { fileName: 'Leads.html', ...source }],
        ['usr_alice', 'kb_2', { fileName: 'Leads.html', ...source }],
        ['usr_alice', 'kb_3', { fileName: 'mine.html', ...source }],
      ]);
      expect(
        await refusal(
          w.artifacts.sendToKnowledgeBase(alice, id, { knowledgeBaseId: 'kb_1', versionId: 'v9' }),
        ),
      ).to.deep.include({ status: 400, code: 'invalid_reference' });
    });
  });
});
