import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';
import { ANALYSIS_STATUSES } from './analysis-rules';

const nullableString = { type: String, default: null };
const nullableDate = { type: Date, default: null };

/** An analysis of a conversation: the question, the state of its current run, and its result. */
export const analysisSchema = new Schema(
  {
    /** The analysisId (`ana_…`). */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    conversationId: { type: String, required: true },
    /** The conversation's agent: the one that works on it. */
    agentId: { type: String, required: true },
    /** Who asked (tables are read and knowledge bases chosen as this member). */
    creatorUserId: { type: String, required: true },
    title: { type: String, required: true },
    description: { type: String, default: '' },
    status: { type: String, enum: ANALYSIS_STATUSES, required: true },
    /** 1 for the first run, +1 per re-run: the run's workflow id carries it, and only that run may write. */
    generation: { type: Number, required: true },
    result: nullableString,
    /** The Markdown artifact of the result: created by the first completed run, a new version per later run. */
    artifactId: nullableString,
    artifactVersionId: nullableString,
    error: nullableString,
    startedAt: nullableDate,
    completedAt: nullableDate,
  },
  { timestamps: true, versionKey: false },
);
// Serves: the analyses of a conversation, newest first (GET …/analysis), and their removal with it.
analysisSchema.index({ organizationId: 1, conversationId: 1, createdAt: -1 });

export type AnalysisDoc = DocOf<typeof analysisSchema>;
export const analysisModel = defineModel('Analysis', 'analyses', analysisSchema);
