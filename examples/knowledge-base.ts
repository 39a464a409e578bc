// Knowledge bases: uploads a text file through its signed URL, waits until it is searchable, searches it.
//
//   npx tsx examples/knowledge-base.ts --org "$ORG" --token "$KEY" --file notes.txt "what does it say about rent"
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { connect, must, run, sleep } from './connect';

async function main() {
  const { args, positionals, client, org } = connect('knowledge-base', ['file'], '"question"');
  const kb = must(
    await client.POST('/orgs/{organizationId}/knowledgebases', {
      params: { path: org },
      body: { title: 'Examples', llmDescription: 'files uploaded by the example', type: 'ORGANIZATION' },
    }),
  );
  const inKb = { ...org, knowledgeBaseId: kb.knowledgeBaseId };
  const file = must(
    await client.POST('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/files/upload-url', {
      params: { path: inKb },
      body: { fileName: basename(args.file), contentType: 'text/plain' },
    }),
  );
  // The bytes go straight to storage; ingestion starts by itself once they arrive.
  const put = await fetch(file.uploadUrl, {
    method: 'PUT',
    headers: { 'Content-Type': 'text/plain' },
    body: await readFile(args.file),
  });
  if (!put.ok) throw new Error(`the upload was refused: ${put.status} ${await put.text()}`);
  for (;;) {
    const { status, statusMessage } = must(
      await client.GET('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/files/{fileId}', {
        params: { path: { ...inKb, fileId: file.fileId } },
      }),
    );
    console.log(status);
    if (status === 'ERROR') throw new Error(statusMessage ?? 'ingestion failed');
    if (status === 'READY') break;
    await sleep(1000);
  }
  const hits = must(
    await client.GET('/orgs/{organizationId}/knowledgebases/{knowledgeBaseId}/search', {
      params: { path: inKb, query: { q: positionals.join(' ') || 'summary' } },
    }),
  );
  for (const hit of hits.items) console.log(`${hit.fileName}: ${hit.text}`);
}

run(main);
