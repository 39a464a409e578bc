import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

export const ETL_TYPES = ['agent', 'workflow'] as const;
export const ETL_FIELDS = [
  'fileName',
  'extension',
  'contentType',
  'externalFileUrl',
  'customInstructions',
] as const;
export type EtlField = (typeof ETL_FIELDS)[number];
export const ETL_COMPARISONS = [
  'EQUALS',
  'CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
  'IS_EMPTY',
  'IS_NOT_EMPTY',
] as const;
export type EtlComparison = (typeof ETL_COMPARISONS)[number];

const conditionSchema = new Schema(
  {
    field: { type: String, enum: ETL_FIELDS, required: true },
    comparison: { type: String, enum: ETL_COMPARISONS, required: true },
    value: { type: String, default: undefined },
    mergeOperator: { type: String, enum: ['AND', 'OR'], default: undefined },
  },
  { _id: false },
);

export const etlRuleSchema = new Schema(
  {
    /** The etlId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    knowledgeBaseId: { type: String, required: true },
    etlType: { type: String, enum: ETL_TYPES, required: true },
    agentId: { type: String, default: null },
    prompt: { type: String, default: null },
    workflowId: { type: String, default: null },
    conditions: { type: [conditionSchema], default: [] },
    /** Whose rights an agent rule's conversation runs with. */
    creatorUserId: { type: String, required: true },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the rules of a knowledge base (list, and the rules to run when a file becomes READY).
etlRuleSchema.index({ organizationId: 1, knowledgeBaseId: 1, createdAt: 1 });

export type EtlRuleDoc = DocOf<typeof etlRuleSchema>;
export type EtlCondition = EtlRuleDoc['conditions'][number];
export const etlRuleModel = defineModel('KnowledgeBaseEtlRule', 'knowledge_base_etl_rules', etlRuleSchema);
