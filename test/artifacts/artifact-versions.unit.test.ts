import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { ArtifactVersionDoc } from '@lib/artifacts/artifact.schema';
import { ObjectTooLarge } from '@lib/knowledge-bases/object-store';
import { artifactsWorld, ctxOf, ORG, refusal, type ArtifactsWorld } from './artifacts-world';

/*
 * Versions (docs/artifacts-and-apps.md): numbered 1, 2, 3… in publishing order, at most 500 per artifact, each
 * version's bytes an S3 object of its own checked against its recorded size and SHA-256 when read.
 */
const alice = ctxOf('chat', 'usr_alice');
const text = (content: string) => ({
  bytes: Buffer.from(content),
  contentType: 'text/plain',
  sizeBytes: content.length,
  sha256: sha(content),
});
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const by = { createdBy: 'usr_alice' };

describe('artifact versions', () => {
  let w: ArtifactsWorld;
  let id: string;
  beforeEach(async () => {
    w = artifactsWorld({ maxBytes: 10 });
    id = (await w.artifacts.upload(alice, { name: 'A', contentType: 'text/plain', content: 'one' })).artifact
      .artifactId;
  });

  it('numbers versions in publishing order and keeps the 500th, not a 501st', async () => {
    const two = await w.versions.append(ORG, id, text('two'), { createdBy: 'usr_bob', agentId: 'agt_1' });
    expect(two.versions.map((v) => v.version)).to.deep.equal([1, 2]);
    expect(two.versions[1]).to.deep.include({
      contentType: 'text/plain',
      sizeBytes: 3,
      sha256: sha('two'),
      key: `artifacts/org_a/${id}/${two.currentVersionId}`,
      createdBy: 'usr_bob',
      agentId: 'agt_1',
    });
    w.docs.get(id)!.versionCount = 499;
    expect((await w.versions.append(ORG, id, text('500th'), by)).versions.at(-1)!.version).to.equal(500);
    expect(await refusal(w.versions.append(ORG, id, text('501st'), by))).to.deep.equal({
      status: 409,
      code: 'conflict',
      message: 'an artifact keeps at most 500 versions; create a new artifact',
      details: undefined,
    });
    expect(w.docs.get(id)!.versionCount).to.equal(500);
  });

  it('makes a repeat of the same versionId a no-op that stores nothing', async () => {
    const first = await w.versions.append(ORG, id, text('two'), by, { versionId: 'ver_x' });
    const keys = w.objects.bytes.size;
    const again = await w.versions.append(ORG, id, text('other'), by, { versionId: 'ver_x' });
    expect(again.versionCount).to.equal(2);
    expect(again.currentVersionId).to.equal(first.currentVersionId);
    expect(w.objects.bytes.size).to.equal(keys);
  });

  it('publishes after a concurrent publish wins, numbering after it and storing the bytes once', async () => {
    let races = 1;
    w.artifactsRepo().beforeAddVersion = (artifactId) => {
      if (races-- > 0) w.docs.get(artifactId)!.versionCount += 1;
    };
    const updated = await w.versions.append(ORG, id, text('mine'), by);
    expect(updated.versions.at(-1)!.version).to.equal(3);
    expect(w.objects.puts.slice(1)).to.deep.equal([
      { key: updated.versions.at(-1)!.key, contentType: 'text/plain' },
    ]);
  });

  it('gives up after five lost races with a 409', async () => {
    let attempts = 0;
    w.artifactsRepo().beforeAddVersion = (artifactId) => {
      attempts++;
      w.docs.get(artifactId)!.versionCount += 1;
    };
    expect(await refusal(w.versions.append(ORG, id, text('mine'), by))).to.deep.equal({
      status: 409,
      code: 'conflict',
      message: 'the artifact is being changed by other requests at the same time; try again',
      details: undefined,
    });
    expect(attempts).to.equal(5);
  });

  it('refuses a version of a missing artifact, and more bytes than the limit', async () => {
    expect(await refusal(w.versions.append(ORG, 'art_nope', text('x'), by))).to.deep.include({
      status: 404,
      message: 'artifact not found',
    });
    expect(await refusal(w.versions.append('org_b', id, text('x'), by))).to.deep.include({ status: 404 });
    expect(w.versions.decode({ contentType: 'text/plain', content: '0123456789' }).sizeBytes).to.equal(10);
    expect(
      await refusal(
        Promise.resolve().then(() =>
          w.versions.decode({ contentType: 'text/plain', content: '01234567890' }),
        ),
      ),
    ).to.deep.equal({
      status: 413,
      code: 'payload_too_large',
      message: 'an artifact version may have at most 10 bytes; this one has 11',
      details: undefined,
    });
  });

  it('returns what a repeated create made, writing no bytes', async () => {
    const ids = { artifactId: id, versionId: 'ver_other' };
    const fields = {
      name: 'B',
      scope: 'library' as const,
      source: 'upload' as const,
      conversationId: null,
      creatorUserId: 'usr_bob',
    };
    const keys = w.objects.bytes.size;
    const { doc, created } = await w.versions.create(ORG, ids, fields, text('x'), by);
    expect({ name: doc.name, created }).to.deep.equal({ name: 'A', created: false });
    expect(w.objects.bytes.size).to.equal(keys);
  });

  it('finds the current version, a named one, or refuses an unknown one', async () => {
    const doc = await w.versions.append(ORG, id, text('two'), by);
    expect(w.versions.find(doc).version).to.equal(2);
    expect(w.versions.find(doc, doc.versions[0]!.versionId).version).to.equal(1);
    expect(() => w.versions.find(doc, 'ver_nope')).to.throw(
      'versionId: ver_nope does not exist or is not visible to you',
    );
  });

  describe('reading bytes', () => {
    let version: ArtifactVersionDoc;
    const mismatch = {
      status: 409,
      code: 'artifact_content_mismatch',
      message: 'the stored bytes of version 1 no longer match its sha256; publish the content again',
      details: undefined,
    };
    beforeEach(() => {
      version = w.docs.get(id)!.versions[0]!;
    });

    it('reads bytes that match their record', async () => {
      expect((await w.versions.read(version)).toString()).to.equal('one');
      // no more than the recorded size is ever held in memory
      expect(w.objects.reads).to.deep.equal([{ key: version.key, maxBytes: 3 }]);
    });

    it('refuses changed, longer, shorter and missing bytes as a mismatch', async () => {
      for (const stored of ['two', 'one!', 'on']) {
        w.objects.bytes.set(version.key, Buffer.from(stored));
        expect(await refusal(w.versions.read(version)), stored).to.deep.equal(mismatch);
      }
      w.objects.bytes.delete(version.key);
      expect(await refusal(w.versions.read(version))).to.deep.equal(mismatch);
    });

    it('turns a too-large object into a mismatch, and lets other storage errors through', async () => {
      w.objects.read = () => Promise.reject(new ObjectTooLarge('too large'));
      expect(await refusal(w.versions.read(version))).to.deep.equal(mismatch);
      w.objects.read = () => Promise.reject(new Error('connection reset'));
      expect(await refusal(w.versions.read(version))).to.deep.include({
        status: undefined,
        message: 'connection reset',
      });
    });
  });
});
