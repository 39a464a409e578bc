import { expect } from 'chai';
import type { TestEnv } from './env';
import { as, type TestOrg } from './org';
import { eventually } from './wait';

export interface KbFile {
  fileId: string;
  status: string;
  statusMessage: string | null;
  uploadUrl?: string;
  [key: string]: unknown;
}

/** Creates an ORGANIZATION knowledge base as the admin; returns its id. */
export async function createKb(env: TestEnv, org: TestOrg, fields: Record<string, unknown> = {}) {
  const res = await as(env, org.admin.token)
    .post(org.path('/knowledgebases'), {
      title: 'Docs',
      llmDescription: 'docs',
      type: 'ORGANIZATION',
      ...fields,
    })
    .expect(201);
  return res.body.knowledgeBaseId as string;
}

/** upload-url, then a plain `fetch` PUT of the bytes to the signed URL, as any client would. */
export async function uploadFile(
  env: TestEnv,
  org: TestOrg,
  kbId: string,
  fileName: string,
  bytes: Uint8Array | string,
  contentType = 'text/plain',
  extra: Record<string, unknown> = {},
): Promise<KbFile> {
  const res = await as(env, org.admin.token)
    .post(org.path(`/knowledgebases/${kbId}/files/upload-url`), { fileName, contentType, ...extra })
    .expect(201);
  const put = await fetch(res.body.uploadUrl as string, {
    method: 'PUT',
    headers: { 'Content-Type': contentType },
    body: typeof bytes === 'string' ? bytes : Buffer.from(bytes),
  });
  expect(put.status, await put.text()).to.equal(200);
  return res.body as KbFile;
}

/** Polls the file until it reaches one of the final states (READY or ERROR) and returns it. */
export async function settled(env: TestEnv, org: TestOrg, kbId: string, fileId: string, timeoutMs = 60_000) {
  return eventually(async () => {
    const res = await as(env, org.admin.token).get(org.path(`/knowledgebases/${kbId}/files/${fileId}`));
    const file = res.body as KbFile;
    return file.status === 'READY' || file.status === 'ERROR' ? file : undefined;
  }, timeoutMs);
}

export async function search(env: TestEnv, org: TestOrg, kbId: string, q: string, extra = '') {
  const res = await as(env, org.chat.token)
    .get(org.path(`/knowledgebases/${kbId}/search?q=${encodeURIComponent(q)}${extra}`))
    .expect(200);
  return res.body.items as Array<{ fileName: string; text: string; pages: string | null; fileId: string }>;
}
