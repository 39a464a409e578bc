import { expect } from 'chai';
import type { TestEnv } from './env';
import { as, type TestOrg } from './org';

export interface ArtifactBody {
  artifactId: string;
  name: string;
  scope: string;
  contentType: string;
  versionCount: number;
  currentVersion: { versionId: string; version: number; sizeBytes: number; sha256: string };
  pinnedAt: string | null;
  pinPosition: number | null;
  versions?: Array<{ versionId: string; version: number }>;
  [key: string]: unknown;
}

/** An app page declaring `manifest` (an object is embedded as JSON; a string as written). */
export function appHtml(manifest: object | string | null, body = '<h1>App</h1>') {
  const declared =
    manifest === null
      ? ''
      : `<script type="text/plain" data-file="service.manifest.ts">\nexport default ${
          typeof manifest === 'string' ? manifest : JSON.stringify(manifest)
        };\n</script>`;
  return `<!doctype html><html><head><title>app</title>${declared}</head><body>${body}</body></html>`;
}

/** Uploads a library artifact as `token`; returns the artifact. */
export async function uploadArtifact(
  env: TestEnv,
  org: TestOrg,
  token: string,
  fields: { name?: string; contentType?: string; content?: string; contentBase64?: string } = {},
): Promise<ArtifactBody> {
  const res = await as(env, token).post(org.path('/artifacts'), {
    name: fields.name ?? 'Report',
    contentType: fields.contentType ?? 'text/html',
    ...(fields.contentBase64 === undefined ? { content: fields.content ?? appHtml(null) } : {}),
    ...(fields.contentBase64 === undefined ? {} : { contentBase64: fields.contentBase64 }),
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.artifact as ArtifactBody;
}

/** Publishes a new version as `token`; returns the artifact. */
export async function publish(
  env: TestEnv,
  org: TestOrg,
  token: string,
  artifactId: string,
  content: string,
  contentType = 'text/html',
): Promise<ArtifactBody> {
  const res = await as(env, token).post(org.path(`/artifacts/${artifactId}/versions`), {
    contentType,
    content,
  });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.artifact as ArtifactBody;
}

/** The bytes behind a signed download link of the artifact (a version, or the current one). */
export async function download(
  env: TestEnv,
  org: TestOrg,
  token: string,
  artifactId: string,
  versionId?: string,
) {
  const link = await as(env, token)
    .post(org.path(`/artifacts/${artifactId}/download-link`), versionId ? { versionId } : undefined)
    .expect(200);
  const res = await fetch(link.body.downloadLink as string);
  expect(res.status).to.equal(200);
  return {
    text: await res.text(),
    contentType: res.headers.get('content-type'),
    disposition: res.headers.get('content-disposition'),
    body: link.body as { versionId: string; expiresAt: string },
  };
}

/** A table `name` with a text field `title` and these rows, made by the owner. */
export async function tableWithRows(env: TestEnv, org: TestOrg, name: string, titles: string[]) {
  await as(env, org.owner.token)
    .post(org.path('/tables'), {
      name,
      fields: [{ name: 'title', type: 'text', required: true, comments: 'a title' }],
    })
    .expect(201);
  if (titles.length)
    await as(env, org.owner.token)
      .post(org.path(`/tables/${name}/data/batch`), { data: titles.map((title) => ({ title })) })
      .expect(200);
}

/** A stand-in workflow catalog's resolve: only `chn_ok` exists (by id) and runs. */
export function onlyChnOk(_organizationId: string, refs: readonly string[]) {
  return Promise.resolve({
    bindings: refs.filter((r) => r === 'chn_ok').map((r) => ({ workflow: r, workflowId: r })),
    missing: refs.filter((r) => r !== 'chn_ok'),
    ambiguous: [],
  });
}
