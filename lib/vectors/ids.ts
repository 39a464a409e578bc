/**
 * Vector ids are `<knowledgeBaseId>#<fileId>#<chunkIndex>`. Pinecone's serverless indexes cannot delete by
 * metadata filter, but list ids by prefix: this layout makes "every vector of a file" and "every vector of a
 * knowledge base" id prefixes. Deterministic, so a retried upsert of a chunk overwrites it.
 */
const SEPARATOR = '#';

function part(name: string, value: string): string {
  if (value.length === 0 || value.includes(SEPARATOR)) {
    throw new Error(`${name} ${JSON.stringify(value)} cannot be part of a vector id (empty or contains '#')`);
  }
  return value;
}

export function vectorId(knowledgeBaseId: string, fileId: string, chunkIndex: number): string {
  if (!Number.isInteger(chunkIndex) || chunkIndex < 0) throw new Error(`bad chunk index ${chunkIndex}`);
  return `${part('knowledgeBaseId', knowledgeBaseId)}#${part('fileId', fileId)}#${chunkIndex}`;
}

/** The prefix shared by every vector id of a knowledge base, or of one of its files. */
export function vectorIdPrefix(knowledgeBaseId: string, fileId?: string): string {
  const kb = `${part('knowledgeBaseId', knowledgeBaseId)}#`;
  return fileId === undefined ? kb : `${kb}${part('fileId', fileId)}#`;
}
