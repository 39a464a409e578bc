/**
 * Knowledge-base search on the embedded vector store (LanceDB): upsert throughput, then query latency and
 * recall@10 of the store's ANN index against an exact brute-force scan run in the same process.
 *
 *   npm run bench -- search            (or: npx tsx bench/search.ts; needs no stack)
 * Knobs (env): BENCH_VECTORS (100000), BENCH_QUERIES (200), BENCH_CLUSTERS (1000), BENCH_BATCH (1000),
 * BENCH_INDEX (the store's default kind, or ivf_hnsw_sq / ivf_flat / ivf_pq).
 *
 * Data: 384-dim unit vectors (all-MiniLM-L6-v2's size) drawn around random cluster centres, so that nearest
 * neighbours are a structure an index can find (uniform random vectors in 384 dims are all nearly equidistant,
 * which makes ANN meaningless). Queries are perturbed copies of stored vectors. One organization, four
 * knowledge bases; queries search all four (the common "agent with its knowledge bases" case), then passes
 * restricted to one knowledge base (a quarter of the rows) and to one file of it (25 rows: a narrow filter,
 * where an index search alone can come back short and the store then scans the filtered rows exactly) to show
 * what a filter costs.
 *
 * Store side: LanceVectorStore.query exactly as the search service calls it (namespace + knowledge-base
 * filter, cosine). Baseline: exact top-10 by dot product over a Float32Array of the same vectors, which is
 * also the truth recall is measured against.
 * Figures are printed, never asserted; the store's default index settings are the ones marked "default".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { vectorId } from '@lib/vectors/ids';
import { DEFAULT_INDEX_SETTINGS, LanceVectorStore, type LanceIndexSettings } from '@lib/vectors/lancedb';
import type { EmbeddingModelRef, VectorRecord } from '@lib/vectors/vector-store';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const N = num('BENCH_VECTORS', 100_000);
const QUERIES = num('BENCH_QUERIES', 200);
const CLUSTERS = num('BENCH_CLUSTERS', 1000);
const BATCH = num('BENCH_BATCH', 1000);
const D = 384;
const K = 10;
const MODEL: EmbeddingModelRef = { id: 'bench:synthetic-384', dimensions: D };
const ORG = 'bench-org';
const KBS = ['kb-0', 'kb-1', 'kb-2', 'kb-3'];
/** Rows per file, spread round-robin over the knowledge bases like every row. */
const FILE_ROWS = 100;
const KIND = (process.env.BENCH_INDEX ?? DEFAULT_INDEX_SETTINGS.kind) as LanceIndexSettings['kind'];

/** mulberry32: reproducible data run to run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(42);
const gauss = () => Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n);
  return v.map((x) => x / n);
}
const around = (centre: Float32Array, spread: number) => unit(centre.map((c) => c + gauss() * spread));

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

/** Exact top K over the given rows (every row when undefined). */
function exactTopK(data: Float32Array, rows: number[] | undefined, q: Float32Array): number[] {
  const best: Array<[number, number]> = [];
  for (let j = 0; j < (rows?.length ?? N); j++) {
    const r = rows ? rows[j]! : j;
    let s = 0;
    const o = r * D;
    for (let i = 0; i < D; i++) s += data[o + i]! * q[i]!;
    if (best.length < K || s > best[best.length - 1]![1]) {
      best.push([r, s]);
      best.sort((a, b) => b[1] - a[1]);
      if (best.length > K) best.pop();
    }
  }
  return best.map(([r]) => r);
}

async function main(): Promise<void> {
  // Data: clustered unit vectors, rows spread round-robin over the knowledge bases.
  const centres = Array.from({ length: CLUSTERS }, () => unit(Float32Array.from({ length: D }, gauss)));
  const data = new Float32Array(N * D);
  for (let r = 0; r < N; r++) data.set(around(centres[Math.floor(random() * CLUSTERS)]!, 0.08), r * D);
  const kbOf = (r: number) => KBS[r % KBS.length]!;
  const fileOf = (r: number) => `file-${Math.floor(r / FILE_ROWS)}`;
  const idOf = (r: number) => vectorId(kbOf(r), fileOf(r), r % FILE_ROWS);
  const rowOfId = new Map<string, number>();
  for (let r = 0; r < N; r++) rowOfId.set(idOf(r), r);
  const queries = Array.from({ length: QUERIES }, () =>
    around(data.subarray(Math.floor(random() * N) * D).slice(0, D), 0.05),
  );

  const dir = mkdtempSync(join(tmpdir(), 'bench-search-'));
  const store = new LanceVectorStore(dir, { kind: KIND });
  try {
    // Ingestion as the worker does it: batches through upsert(), index built and refreshed in the background.
    let t = performance.now();
    for (let start = 0; start < N; start += BATCH) {
      const records: VectorRecord[] = [];
      for (let r = start; r < Math.min(N, start + BATCH); r++) {
        records.push({
          id: idOf(r),
          values: Array.from(data.subarray(r * D, (r + 1) * D)),
          metadata: {
            knowledgeBaseId: kbOf(r),
            fileId: fileOf(r),
            chunkId: `chunk-${r}`,
          },
        });
      }
      await store.upsert(MODEL, ORG, records);
    }
    const upsertMs = performance.now() - t;
    t = performance.now();
    await store.maintain(MODEL);
    const catchUpMs = performance.now() - t;
    console.log(`vectors: ${N} × ${D} dims in ${CLUSTERS} clusters; queries: ${QUERIES}, top ${K}`);
    console.log(
      `upsert (batches of ${BATCH}, index maintenance included): ${(N / (upsertMs / 1000)).toFixed(0)} vectors/s ` +
        `(${(upsertMs / 1000).toFixed(1)} s); index catch-up after the last batch: ${(catchUpMs / 1000).toFixed(1)} s`,
    );

    // Exact baseline, in this process.
    const kb0Rows = Array.from({ length: N }, (_, r) => r).filter((r) => kbOf(r) === KBS[0]);
    // The one-file pass: each query searches the kb-0 rows of one file (the file of a random row of kb-0).
    const queryFile = queries.map(() => fileOf(kb0Rows[Math.floor(random() * kb0Rows.length)]!));
    const exact: number[][] = [];
    const exactKb0: number[][] = [];
    const exactFile: number[][] = [];
    const exactMs: number[] = [];
    for (const [i, q] of queries.entries()) {
      const s = performance.now();
      exact.push(exactTopK(data, undefined, q));
      exactMs.push(performance.now() - s);
      exactKb0.push(exactTopK(data, kb0Rows, q));
      const file = Number(queryFile[i]!.slice('file-'.length));
      const fileRows = Array.from({ length: FILE_ROWS }, (_, j) => file * FILE_ROWS + j);
      exactFile.push(
        exactTopK(
          data,
          fileRows.filter((r) => kbOf(r) === KBS[0]),
          q,
        ),
      );
    }
    exactMs.sort((a, b) => a - b);
    const exactP50 = percentile(exactMs, 0.5);
    console.log(
      `exact brute force (JS, Float32Array): p50 ${fmt(percentile(exactMs, 0.5))}, p99 ${fmt(percentile(exactMs, 0.99))}`,
    );

    const run = async (
      label: string,
      settings: Partial<LanceIndexSettings>,
      filter: { kbs: string[]; file?: boolean },
      truth: number[][],
    ) => {
      const s = new LanceVectorStore(dir, { kind: KIND, ...settings });
      const query = (i: number) =>
        s.query(MODEL, ORG, {
          vector: Array.from(queries[i]!),
          topK: K,
          knowledgeBaseIds: filter.kbs,
          fileIds: filter.file ? [queryFile[i]!] : undefined,
        });
      for (let i = 0; i < 20; i++) await query(i);
      const times: number[] = [];
      let found = 0;
      const cpuBefore = process.cpuUsage();
      for (let i = 0; i < queries.length; i++) {
        const start = performance.now();
        const matches = await query(i);
        times.push(performance.now() - start);
        const want = new Set(truth[i]);
        found += matches.filter((m) => want.has(rowOfId.get(m.id)!)).length;
      }
      const cpu = process.cpuUsage(cpuBefore);
      await s.close();
      times.sort((a, b) => a - b);
      console.log(
        `${label.padEnd(44)} p50 ${fmt(percentile(times, 0.5)).padStart(9)}  p99 ${fmt(percentile(times, 0.99)).padStart(9)}  ` +
          `recall@${K} ${(found / (queries.length * K)).toFixed(3)}  p50 ${(percentile(times, 0.5) / exactP50).toFixed(2)}× the exact scan's  ` +
          // CPU time (all threads) moves less than latency with what else the machine runs.
          `CPU ${fmt((cpu.user + cpu.system) / 1000 / queries.length)}/query`,
      );
    };
    const d = DEFAULT_INDEX_SETTINGS;
    type Knobs = Partial<Pick<LanceIndexSettings, 'ef' | 'refineFactor' | 'nprobes'>>;
    const isDefault = (settings: Knobs) =>
      KIND === d.kind && Object.entries(settings).every(([k, v]) => d[k as keyof LanceIndexSettings] === v);
    const label = (settings: Knobs) =>
      '  ' +
      Object.entries(settings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') +
      (isDefault(settings) ? ' (default)' : '');
    console.log(`LanceDB ${KIND}, all four knowledge bases:`);
    // What each kind has to tune: HNSW its candidates and re-ranking, IVF_PQ probes and re-ranking, IVF_FLAT
    // (exact distances) probes only.
    const sweep: Knobs[] =
      KIND === 'ivf_hnsw_sq'
        ? [
            { ef: 20, refineFactor: 1 },
            { ef: 50, refineFactor: 1 },
            { ef: 50, refineFactor: 2 },
            { ef: 100, refineFactor: 2 },
            { ef: 200, refineFactor: 2 },
          ]
        : KIND === 'ivf_pq'
          ? [5, 10, 20, 40].flatMap((nprobes) => [10, 20].map((refineFactor) => ({ nprobes, refineFactor })))
          : [5, 10, 20, 40, 80].map((nprobes) => ({ nprobes }));
    for (const settings of sweep) await run(label(settings), settings, { kbs: KBS }, exact);
    console.log(`LanceDB ${KIND}, default settings, narrower filters:`);
    await run('  one knowledge base (a quarter of the rows)', {}, { kbs: [KBS[0]!] }, exactKb0);
    await run(`  one file (${FILE_ROWS / KBS.length} rows)`, {}, { kbs: [KBS[0]!], file: true }, exactFile);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
