/** Limits of custom tables. openapi.yaml states the same numbers; keep both in step. */
export const TABLE_LIMITS = {
  /** Fields per table: each scalar field gets an index and MongoDB allows 64 per collection. */
  maxFields: 50,
  /** Length of table, field and column names. */
  maxNameLength: 63,
  /** Rows per batch insert request. */
  maxBatchRows: 1000,
  /** JSON body size of a batch insert request (other requests keep the app-wide limit). */
  batchBodyLimit: '8mb',
  /** Page size of row reads. */
  defaultPageSize: 20,
  maxPageSize: 1000,
} as const;

/** Table, field and column names: letters, digits and underscores. */
export const NAME_PATTERN = /^[A-Za-z0-9_]+$/;
/** A table name as a JSON Schema `pattern`, for what names tables from outside this feature (tool
 * configurations, app manifests): NAME_PATTERN within maxNameLength. */
export const TABLE_NAME_PATTERN = `^[A-Za-z0-9_]{1,${TABLE_LIMITS.maxNameLength}}$`;
/** Data Dictionary field names: lowercase letters, digits and underscores. */
export const DD_FIELD_NAME_PATTERN = /^[a-z0-9_]+$/;
/** Reserved for the generated row id: no field may be called (or renamed to) this. */
export const ROW_ID_FIELD = 'id';
