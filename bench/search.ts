/**
 * Knowledge-base search on the embedded vector store (LanceDB): upsert throughput, then query latency and
 * recall@10 of the store's ANN index against an exact brute-force scan run in the same process.
 *
 *   npm run bench -- search            (or: npx tsx bench/search.ts; needs no stack)
 * Knobs (env): BENCH_VECTORS (100000), BENCH_QUERIES (200), BENCH_CLUSTERS (1000), BENCH_BATCH (1000),
 * BENCH_INDEX (the store's default kind, or ivf_pq / ivf_flat).
 *
 * Data: 384-dim unit vectors (all-MiniLM-L6-v2's size) drawn around random cluster centres, so that nearest
 * neighbours are a structure an index can find (uniform random vectors in 384 dims are all nearly equidistant,
 * which makes ANN meaningless). Queries are perturbed copies of stored vectors. One organization, four
 * knowledge bases; queries search all four (the common "agent with its knowledge bases" case), plus a pass
 * restricted to one knowledge base (a quarter of the rows) to show the cost of a filter.
 *
 * Store side: LanceVectorStore.query exactly as the search service calls it (namespace + knowledge-base
 * filter, cosine). Baseline: exact top-10 by dot product over a Float32Array of the same vectors.
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

function exactTopK(data: Float32Array, rows: boolean[] | undefined, q: Float32Array): number[] {
  const best: Array<[number, number]> = [];
  for (let r = 0; r < N; r++) {
    if (rows && !rows[r]) continue;
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
  const idOf = (r: number) => vectorId(kbOf(r), `file-${Math.floor(r / 100)}`, r % 100);
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
            fileId: `file-${Math.floor(r / 100)}`,
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
    const kb0Rows = Array.from({ length: N }, (_, r) => kbOf(r) === KBS[0]);
    const exact: number[][] = [];
    const exactKb0: number[][] = [];
    const exactMs: number[] = [];
    for (const q of queries) {
      const s = performance.now();
      exact.push(exactTopK(data, undefined, q));
      exactMs.push(performance.now() - s);
      exactKb0.push(exactTopK(data, kb0Rows, q));
    }
    exactMs.sort((a, b) => a - b);
    console.log(
      `exact brute force (JS, Float32Array): p50 ${fmt(percentile(exactMs, 0.5))}, p99 ${fmt(percentile(exactMs, 0.99))}`,
    );

    const run = async (
      label: string,
      settings: Partial<LanceIndexSettings>,
      kbs: string[],
      truth: number[][],
    ) => {
      const s = new LanceVectorStore(dir, { kind: KIND, ...settings });
      for (const q of queries.slice(0, 20))
        await s.query(MODEL, ORG, { vector: Array.from(q), topK: K, knowledgeBaseIds: kbs });
      const times: number[] = [];
      let found = 0;
      for (const [i, q] of queries.entries()) {
        const start = performance.now();
        const matches = await s.query(MODEL, ORG, { vector: Array.from(q), topK: K, knowledgeBaseIds: kbs });
        times.push(performance.now() - start);
        const want = new Set(truth[i]);
        found += matches.filter((m) => want.has(rowOfId.get(m.id)!)).length;
      }
      await s.close();
      times.sort((a, b) => a - b);
      console.log(
        `${label.padEnd(44)} p50 ${fmt(percentile(times, 0.5)).padStart(9)}  p99 ${fmt(percentile(times, 0.99)).padStart(9)}  recall@${K} ${(found / (queries.length * K)).toFixed(3)}`,
      );
    };
    const d = DEFAULT_INDEX_SETTINGS;
    console.log(`LanceDB ${KIND}, all four knowledge bases:`);
    // IVF_FLAT's distances are exact, so only IVF_PQ has a refine factor to tune.
    const sweep: Array<[number, number]> =
      KIND === 'ivf_pq'
        ? [
            [5, 5],
            [10, 5],
            [10, 10],
            [20, 10],
            [40, 10],
            [40, 20],
          ]
        : [
            [5, d.refineFactor],
            [10, d.refineFactor],
            [20, d.refineFactor],
            [40, d.refineFactor],
          ];
    for (const [nprobes, refineFactor] of sweep) {
      const isDefault = nprobes === d.nprobes && refineFactor === d.refineFactor && KIND === d.kind;
      const refine = KIND === 'ivf_pq' ? `, refine ×${refineFactor}` : '';
      await run(
        `  nprobes ${nprobes}${refine}${isDefault ? ' (default)' : ''}`,
        { nprobes, refineFactor },
        KBS,
        exact,
      );
    }
    console.log(`LanceDB ${KIND}, one knowledge base (a quarter of the rows):`);
    await run(`  nprobes ${d.nprobes} (default settings)`, {}, [KBS[0]!], exactKb0);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
