/**
 * The bounds of LanceDB's in-memory caches in one process (VECTOR_INDEX_CACHE_MB, VECTOR_METADATA_CACHE_MB), apart
 * from lancedb.ts so configuration can name the defaults without loading LanceDB. LanceDB's own defaults are 6 GB
 * of index data and 1 GB of metadata. The metadata cache keeps the manifest of every version a process has read, and
 * every write is a version whose manifest lists all of the table's fragments: the worker grew by 5–10 MB a minute in
 * the 60-minute soak (bench/RESULTS.md#soak).
 */
export interface LanceCacheSettings {
  indexCacheMb: number;
  metadataCacheMb: number;
}

export const DEFAULT_CACHE_SETTINGS: LanceCacheSettings = { indexCacheMb: 256, metadataCacheMb: 64 };
