import { Index, type Table, type VectorQuery } from '@lancedb/lancedb';

/**
 * The ANN index of a LanceDB vectors table and how queries search it. Figures from bench/search.ts (100k
 * clustered 384-dim vectors, shared 2-core machine): IVF_HNSW_SQ (one HNSW graph over 8-bit scalar-quantized
 * vectors, re-ranked on the stored vectors) reaches recall@10 ≥ 0.99 in a few milliseconds; IVF_FLAT needs
 * most of its partitions probed for recall 0.95 on the same data (recall 0.88 at 20 of 139), at 50–90 ms.
 */
export interface LanceIndexSettings {
  /** Rows from which a table gets a vector index; below it every query is an exact scan (fast at that size). */
  threshold: number;
  /**
   * `ivf_hnsw_sq`: an HNSW graph per IVF partition over 8-bit scalar-quantized vectors (fast, high recall;
   * distances re-ranked on the stored vectors by refineFactor). `ivf_flat`: the vectors themselves per
   * partition (exact within the probed partitions). `ivf_pq`: 8-bit PQ codes per partition.
   */
  kind: 'ivf_hnsw_sq' | 'ivf_flat' | 'ivf_pq';
  /**
   * IVF partitions per row count. HNSW kinds: one partition per million rows (LanceDB's advice: each partition
   * is a graph of its own, one graph searches best); IVF kinds: √rows.
   */
  partitions?: (rows: number) => number;
  /** IVF_PQ: sub-vectors (dimensions / 8 keeps 8 values per code, SIMD-friendly). */
  subVectors?: (dimensions: number) => number;
  /** k-means iterations when training partitions (LanceDB's default is 50). */
  maxIterations?: number;
  /** HNSW: neighbours kept per vector (LanceDB's default 20). */
  m?: number;
  /** HNSW: candidates considered per vector while building the graph. */
  efConstruction: number;
  /** Partitions searched per query (min = max: a filter that leaves results short falls back to an exact scan). */
  nprobes: number;
  /** HNSW: candidates considered per query (at least topK × refineFactor). */
  ef: number;
  /** IVF_PQ and HNSW_SQ: candidates re-ranked on the stored vectors, topK × this (IVF_FLAT is exact already). */
  refineFactor: number;
  /** Unindexed rows (added after the index was built) that trigger folding them into the index. */
  reindexAfter: number;
  /** Delta indices (one per fold) beyond which the index is rebuilt as one (each costs every query a search). */
  maxDeltas: number;
}

export const DEFAULT_INDEX_SETTINGS: LanceIndexSettings = {
  kind: 'ivf_hnsw_sq',
  threshold: 20_000,
  efConstruction: 100,
  nprobes: 20,
  ef: 100,
  refineFactor: 2,
  reindexAfter: 5_000,
  maxDeltas: 8,
};

export const VECTOR_INDEX = 'vector_idx';

/** How long a table's older versions stay on disk after a compaction below the index threshold. */
export const OLD_VERSIONS_KEPT_MS = 10 * 60_000;

const isHnsw = (s: LanceIndexSettings) => s.kind === 'ivf_hnsw_sq';

/** Sets how an indexed search probes; LanceDB ignores these on a table without a vector index. */
export function tuneSearch(search: VectorQuery, s: LanceIndexSettings, topK: number): VectorQuery {
  // nprobes() sets the minimum and the maximum together (minimumNprobes alone may not pass the default
  // maximum of 20). A maximum of "all" would make LanceDB probe every partition under any filter.
  let tuned = search.nprobes(s.nprobes);
  if (s.kind !== 'ivf_flat') tuned = tuned.refineFactor(s.refineFactor);
  if (isHnsw(s)) tuned = tuned.ef(Math.max(s.ef, topK * s.refineFactor));
  return tuned;
}

function indexConfig(s: LanceIndexSettings, rows: number, dimensions: number): Index {
  const partitions =
    s.partitions?.(rows) ??
    (isHnsw(s) ? Math.ceil(rows / 1_000_000) : Math.max(1, Math.round(Math.sqrt(rows))));
  const common = {
    distanceType: 'cosine' as const,
    numPartitions: partitions,
    maxIterations: s.maxIterations,
  };
  switch (s.kind) {
    case 'ivf_hnsw_sq':
      return Index.hnswSq({ ...common, m: s.m, efConstruction: s.efConstruction });
    case 'ivf_flat':
      return Index.ivfFlat(common);
    case 'ivf_pq':
      return Index.ivfPq({ ...common, numSubVectors: s.subVectors?.(dimensions) ?? dimensions / 8 });
  }
}

/** How LanceDB's index statistics name each kind. */
const INDEX_TYPE: Record<LanceIndexSettings['kind'], string> = {
  ivf_hnsw_sq: 'IVF_HNSW_SQ',
  ivf_flat: 'IVF_FLAT',
  ivf_pq: 'IVF_PQ',
};

/** The filters every query and delete carries. */
const SCALAR_INDICES = [
  ['namespace', () => Index.bitmap()],
  ['knowledge_base_id', () => Index.btree()],
  ['file_id', () => Index.btree()],
  ['key', () => Index.btree()],
] as const;

/**
 * Below the threshold, compacts the table; builds the vector index once the table reaches the threshold; later
 * folds the rows added since into it as a delta index, and rebuilds it as one index when the deltas pile up (or
 * when it is of another kind than the settings ask for). Runs in the table's write queue.
 */
export async function maintainIndex(table: Table, s: LanceIndexSettings, dimensions: number): Promise<void> {
  const stats = await table.indexStats(VECTOR_INDEX);
  if (stats && stats.numUnindexedRows < s.reindexAfter) return;
  const rows = await table.countRows();
  if (!stats && rows < s.threshold) {
    // No index to remap yet: compaction rewrites the table, at most about a second of CPU (19,000 rows of 1,536
    // dimensions: bench/RESULTS.md#soak), and without it every small write leaves a fragment that every later read
    // and write goes over. Versions older than OLD_VERSIONS_KEPT_MS go with it (no read lasts that long).
    await table.optimize({ cleanupOlderThan: new Date(Date.now() - OLD_VERSIONS_KEPT_MS) });
    return;
  }
  // Compacting first means the index covers fragments that compaction leaves alone from then on. Compacting
  // fragments an HNSW index already covers remaps the index, which cost 35 s after a 64 s build at 20k rows
  // (measured); compacted first, each later fold took about a second. With an index present, this also folds
  // the new rows into a delta index of their own.
  await table.optimize();
  // numIndices counts the first index and its deltas, before this fold added one more.
  if (stats && (stats.numIndices ?? 1) <= s.maxDeltas && stats.indexType === INDEX_TYPE[s.kind]) return;
  await table.createIndex('vector', {
    name: VECTOR_INDEX,
    config: indexConfig(s, rows, dimensions),
    replace: true,
  });
  const present = new Set((await table.listIndices()).flatMap((i) => i.columns));
  for (const [column, config] of SCALAR_INDICES) {
    if (!present.has(column)) await table.createIndex(column, { config: config() });
  }
}
