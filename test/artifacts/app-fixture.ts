import { ctxOf, ORG, type ArtifactsWorld } from './artifacts-world';

/* One approved app, as the app bridge and session tests start from. */
const alice = ctxOf('chat', 'usr_alice');
const bob = ctxOf('chat', 'usr_bob');
const admin = ctxOf('admin', 'usr_admin');
export const API = 'https://api.test';

export const appHtml = (manifest: object, body = '<h1>App</h1>') =>
  `<!doctype html><script type="text/plain" data-file="service.manifest.ts">export default ${JSON.stringify(manifest)}</script>${body}`;

export const MANIFEST = {
  workflows: ['Weekly report'],
  tables: [
    { table: 'orders', access: 'read' },
    { table: 'notes', access: 'write' },
  ],
};

/** An app by alice, pinned, shared with bob, approved by an admin; bob's open session on it. */
export async function approvedApp(w: ArtifactsWorld, manifest: object = MANIFEST) {
  w.members[ORG] = { usr_alice: 'chat', usr_bob: 'chat', usr_admin: 'admin' };
  w.tableNames.push([ORG, 'orders'], [ORG, 'notes'], [ORG, 'secrets']);
  w.chains.push({ organizationId: ORG, id: 'chn_report', name: 'Weekly report', runnable: true });
  w.chains.push({ organizationId: ORG, id: 'chn_other', name: 'Other', runnable: true });
  const { artifact } = await w.artifacts.upload(alice, {
    name: 'Board',
    contentType: 'text/html',
    content: appHtml(manifest),
  });
  const id = artifact.artifactId;
  await w.artifacts.pin(alice, id);
  await w.artifacts.share(alice, id, { userIds: ['usr_bob'] });
  await w.manifests.approve(admin, id);
  const link = await w.runtime.open(bob, id, API);
  const token = new URL(link.url).searchParams.get('session')!;
  const session = await w.runtime.authenticate(token, ORG, id);
  return { id, versionId: artifact.currentVersion.versionId, session };
}
