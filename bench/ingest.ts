/**
 * Knowledge-base ingestion: pages/s of the service (signed upload → ingestion workflow → READY) against the bare
 * pipeline (parse → chunk → embed → upsert) with the same parser, embedder and vector store in the same run;
 * then 100 files uploaded at once, all of which must end READY (none stuck).
 *
 *   npm run bench -- ingest
 * Knobs (env): BENCH_PAGES (200, pages of the generated PDF), BENCH_FILES (100).
 * Figures are printed, never asserted. The worker runs in this process, as `npm start` runs it beside the API.
 */
import { performance } from 'node:perf_hooks';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { chunkSegments, createVisionReader, parseDocument } from '@lib/knowledge-bases/parsing';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';
import type { RequestContext } from '@lib/auth/context';
import { vectorId } from '@lib/vectors/ids';
import { createWorker } from '@worker/create-worker';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const PAGES = num('BENCH_PAGES', 200);
const FILES = num('BENCH_FILES', 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function makePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const text = Array.from(
      { length: 12 },
      (_, i) => `Page ${p} line ${i}: the ${['roof', 'boiler', 'lift', 'garden'][i % 4]} was inspected.`,
    ).join(' ');
    doc.addPage([600, 800]).drawText(text, { x: 30, y: 760, font, size: 10, maxWidth: 540, lineHeight: 13 });
  }
  return doc.save();
}

async function main() {
  const config = loadConfig({ ...process.env, JWT_SECRET: process.env.JWT_SECRET ?? 'x'.repeat(32) });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  const { worker, connection } = await createWorker(config.temporal, deps);
  const running = worker.run();
  try {
    const boot = await bootstrapOrganization(deps, {
      orgName: 'Bench ingest',
      email: `bench-${Date.now()}@example.test`,
      name: 'Bench',
    });
    const ctx: RequestContext = {
      organizationId: boot.organizationId,
      userId: boot.userId,
      role: 'owner',
      capabilities: ROLE_CAPABILITIES.owner,
      via: 'session',
    };
    const kb = await deps.services.knowledgeBases.create(ctx, {
      title: 'Bench',
      llmDescription: '',
      type: 'ORGANIZATION',
    });
    const pdf = await makePdf(PAGES);
    const embedder = deps.embedders.defaultEmbedder;
    // Load the model and pdf.js before either side is timed (the worker shares this process).
    await embedder.embed(['warm-up']);
    await parseDocument({
      fileName: 'warm-up.pdf',
      bytes: await makePdf(1),
      strategy: 'auto',
      vision: createVisionReader(deps.llm, config.kb.visionModel),
    });

    // Bare pipeline, in this process.
    let t = performance.now();
    const parsed = await parseDocument({
      fileName: 'bench.pdf',
      bytes: pdf,
      strategy: 'auto',
      vision: createVisionReader(deps.llm, config.kb.visionModel),
    });
    const chunks = chunkSegments(parsed.segments);
    for (let i = 0; i < chunks.length; i += 128) {
      const batch = chunks.slice(i, i + 128);
      const vectors = await embedder.embed(batch.map((c) => c.text));
      await deps.vectors.upsert(
        embedder.model,
        'bench-bare',
        batch.map((c, j) => ({
          id: vectorId('kb-bare', 'file-bare', c.index),
          values: vectors[j]!,
          metadata: { knowledgeBaseId: 'kb-bare', fileId: 'file-bare', chunkId: String(c.index) },
        })),
      );
    }
    const bareS = (performance.now() - t) / 1000;

    const upload = async (name: string, bytes: Uint8Array | string, type: string) => {
      const file = await deps.services.kbFiles.createUploadUrl(ctx, kb.knowledgeBaseId, {
        fileName: name,
        contentType: type,
      });
      const res = await fetch(file.uploadUrl, {
        method: 'PUT',
        headers: { 'Content-Type': type },
        body: bytes,
      });
      if (res.status !== 200) throw new Error(`upload refused: ${res.status}`);
      return file.fileId;
    };
    const statusOf = async (fileId: string) =>
      (await deps.repos.tenant(ctx.organizationId).kbFiles.get(kb.knowledgeBaseId, fileId))?.status;

    // The service: upload-url, PUT, then the workflow until READY.
    t = performance.now();
    const fileId = await upload('bench.pdf', pdf, 'application/pdf');
    while (!['READY', 'ERROR'].includes((await statusOf(fileId)) ?? '')) await sleep(50);
    const serviceS = (performance.now() - t) / 1000;
    console.log(`ingestion of a ${PAGES}-page PDF (${chunks.length} chunks), ${embedder.model.id}:`);
    console.log(`  bare pipeline   ${(PAGES / bareS).toFixed(1)} pages/s (${bareS.toFixed(1)} s)`);
    console.log(
      `  service         ${(PAGES / serviceS).toFixed(1)} pages/s (${serviceS.toFixed(1)} s, ${await statusOf(fileId)})`,
    );
    console.log(`  ratio           ${(bareS / serviceS).toFixed(2)}x of bare (target >= 0.7x)`);

    // Many files at once: every one must end READY.
    t = performance.now();
    const ids = await Promise.all(
      Array.from({ length: FILES }, (_, i) =>
        upload(
          `note-${i}.txt`,
          `Note ${i}: the ${['roof', 'boiler', 'lift'][i % 3]} needs attention.`,
          'text/plain',
        ),
      ),
    );
    const deadline = Date.now() + 15 * 60_000;
    let statuses: Array<string | undefined> = [];
    do {
      await sleep(500);
      statuses = await Promise.all(ids.map(statusOf));
    } while (statuses.some((s) => s !== 'READY' && s !== 'ERROR') && Date.now() < deadline);
    const counts = statuses.reduce<Record<string, number>>(
      (acc, s) => ({ ...acc, [s ?? 'missing']: (acc[s ?? 'missing'] ?? 0) + 1 }),
      {},
    );
    console.log(
      `${FILES} files uploaded at once: ${JSON.stringify(counts)} in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    console.log(`worker RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await closeDeps(deps);
  }
}

void main().catch((err) => {
  console.error(err);
  process.exit(1);
});
