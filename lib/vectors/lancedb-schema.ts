import { createHash } from 'node:crypto';
import { Field, FixedSizeList, Float32, Schema, Utf8 } from 'apache-arrow';
import type { EmbeddingModelRef, VectorMetadata } from '@lib/vectors/vector-store';

/** One row of a LanceDB vectors table. snake_case: DataFusion SQL would need quotes for capitals. */
export interface VectorRow extends Record<string, unknown> {
  /** `<namespace>\u001f<id>`: the merge key, so one id in two organizations are two rows */
  key: string;
  namespace: string;
  id: string;
  knowledge_base_id: string;
  file_id: string;
  chunk_id: string;
  vector: number[];
}

export function vectorSchema(dimensions: number): Schema {
  const text = (name: string) => new Field(name, new Utf8(), false);
  return new Schema([
    text('key'),
    text('namespace'),
    text('id'),
    text('knowledge_base_id'),
    text('file_id'),
    text('chunk_id'),
    new Field('vector', new FixedSizeList(dimensions, new Field('item', new Float32(), true)), false),
  ]);
}

export const rowKey = (namespace: string, id: string) => `${namespace}\u001f${id}`;

/**
 * The table of one embedding model: a readable slug of the id, the dimension, and a hash of the exact id so
 * ids that slug alike (`a:b.c`, `a:b_c`) never share a table.
 */
export function tableName(model: EmbeddingModelRef): string {
  const slug = model.id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 60);
  const hash = createHash('sha256').update(model.id).digest('hex').slice(0, 8);
  return `vectors_${slug}_${model.dimensions}_${hash}`;
}

/** A SQL string literal (DataFusion): quotes doubled, nothing else is special inside one. */
export const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

const anyOf = (column: string, values: string[]) =>
  values.length === 1
    ? `${column} = ${literal(values[0]!)}`
    : `${column} IN (${values.map(literal).join(', ')})`;

/** The WHERE clause of a query or delete; every clause starts with the namespace. */
export function whereClause(
  namespace: string,
  filter: { knowledgeBaseIds?: string[]; fileIds?: string[] } = {},
): string {
  const clauses = [`namespace = ${literal(namespace)}`];
  if (filter.knowledgeBaseIds) clauses.push(anyOf('knowledge_base_id', filter.knowledgeBaseIds));
  if (filter.fileIds) clauses.push(anyOf('file_id', filter.fileIds));
  return clauses.join(' AND ');
}

export function toMetadata(row: Record<string, unknown>): VectorMetadata {
  return {
    knowledgeBaseId: String(row.knowledge_base_id),
    fileId: String(row.file_id),
    chunkId: String(row.chunk_id),
  };
}
