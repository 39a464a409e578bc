// TEMPORARY (replaced by the vectors branch)
export const vectorId = (knowledgeBaseId: string, fileId: string, chunkIndex: number) =>
  `${knowledgeBaseId}#${fileId}#${chunkIndex}`;
