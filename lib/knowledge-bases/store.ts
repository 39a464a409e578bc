import type { AgentKbAttachmentsRepository } from './agent-kb-attachments.repository';
import type { EtlRulesRepository } from './etl-rules.repository';
import type { KbChunksRepository } from './kb-chunks.repository';
import type { KbFilesRepository } from './kb-files.repository';
import type { KnowledgeBasesRepository } from './knowledge-bases.repository';

/** The knowledge-bases feature's own collections, for one organization. */
export interface KnowledgeBasesStore {
  knowledgeBases: KnowledgeBasesRepository;
  kbFiles: KbFilesRepository;
  kbChunks: KbChunksRepository;
  etlRules: EtlRulesRepository;
  agentKnowledgeBases: AgentKbAttachmentsRepository;
}
