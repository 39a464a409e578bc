import { pickView } from '@lib/db/view';
import type { AgentKbAttachmentDoc } from './agent-kb-attachment.schema';
import type { EtlRuleDoc } from './etl-rule.schema';
import type { KbFileDoc } from './kb-file.schema';
import type { KnowledgeBaseDoc } from './knowledge-base.schema';

export function toKnowledgeBaseView(kb: KnowledgeBaseDoc) {
  return pickView(kb, [
    'knowledgeBaseId',
    'organizationId',
    'type',
    'title',
    'llmDescription',
    'creatorUserId',
    'isPublic',
    'parseStrategy',
    'folder',
    'agentId',
    'embeddingModel',
    'createdAt',
    'updatedAt',
  ]);
}

export function toFileView(f: KbFileDoc) {
  return {
    fileId: f._id,
    ...pickView(f, [
      'knowledgeBaseId',
      'organizationId',
      'fileName',
      'key',
      'contentType',
      'status',
      'parseStrategyOverride',
      'customInstructions',
      'statusMessage',
      'externalFileUrl',
      'creatorUserId',
      'sizeBytes',
      'pageCount',
      'chunkCount',
      'generation',
      'createdAt',
      'updatedAt',
    ]),
  };
}

export function toEtlRuleView(r: EtlRuleDoc) {
  return {
    etlId: r._id,
    ...pickView(r, [
      'knowledgeBaseId',
      'organizationId',
      'etlType',
      'agentId',
      'prompt',
      'workflowId',
      'creatorUserId',
      'createdAt',
      'updatedAt',
    ]),
    // Stored subdocuments carry absent optionals as undefined: leave them out on the wire.
    conditions: r.conditions.map((c) => JSON.parse(JSON.stringify(c)) as typeof c),
  };
}

export function toAgentKbView(a: AgentKbAttachmentDoc) {
  return pickView(a, [
    'organizationId',
    'agentId',
    'knowledgeBaseId',
    'kbOrganizationId',
    'kbTitle',
    'creatorUserId',
    'createdAt',
  ]);
}
