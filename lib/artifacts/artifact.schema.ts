import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/** library: the organization's; conversation / chain-run: written there by an agent tool (until promoted). */
export const ARTIFACT_SCOPES = ['library', 'conversation', 'chain-run'] as const;
export type ArtifactScope = (typeof ARTIFACT_SCOPES)[number];
/** Where the first version came from. */
export const ARTIFACT_SOURCES = ['upload', 'conversation', 'chain-run'] as const;
export type ArtifactSource = (typeof ARTIFACT_SOURCES)[number];

const nullableString = { type: String, default: null };

/** One immutable version: its bytes live in S3 under `key`. */
const versionSchema = new Schema(
  {
    versionId: { type: String, required: true },
    /** 1, 2, 3… in publishing order */
    version: { type: Number, required: true },
    contentType: { type: String, required: true },
    sizeBytes: { type: Number, required: true },
    /** hex SHA-256 of the bytes */
    sha256: { type: String, required: true },
    key: { type: String, required: true },
    /** the member (or, for agent tools, the conversation's creator) who published it */
    createdBy: { type: String, required: true },
    /** the agent that wrote it, for versions written by an agent tool */
    agentId: nullableString,
    createdAt: { type: Date, required: true },
  },
  { _id: false },
);

export const artifactSchema = new Schema(
  {
    /** The artifactId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    /** Lower-cased name: the case-insensitive `q` filter. */
    nameKey: { type: String, required: true },
    scope: { type: String, enum: ARTIFACT_SCOPES, required: true },
    source: { type: String, enum: ARTIFACT_SOURCES, required: true },
    /** The conversation that produced it (kept after promotion to the library). */
    conversationId: nullableString,
    /** The chain run whose step produced it, and its chain (kept after promotion to the library). */
    chainRunId: nullableString,
    actionChainId: nullableString,
    creatorUserId: { type: String, required: true },
    /** Every version, oldest first; the last one is the current version. */
    versions: { type: [versionSchema], required: true },
    /** Goes up with every version: publishing checks it so two concurrent publishes never share a number. */
    versionCount: { type: Number, required: true },
    currentVersionId: { type: String, required: true },
    /** The current version's content type (the `contentType` filter). */
    contentType: { type: String, required: true },
    pinnedAt: { type: Date, default: null },
    /** Order among the pinned artifacts (0 first); null when not pinned. */
    pinPosition: { type: Number, default: null },
    sharedUserIds: { type: [String], default: [] },
    sharedGroupIds: { type: [String], default: [] },
    promotedAt: { type: Date, default: null },
    promotedBy: nullableString,
  },
  { timestamps: true, versionKey: false },
);
// Serves: the artifact list, most recently changed first, and its filters (scope, conversation, content type).
artifactSchema.index({ organizationId: 1, updatedAt: -1 });
// Serves: the pinned list in pin order, and finding the last pin position when pinning.
artifactSchema.index({ organizationId: 1, pinPosition: 1 });
// Serves: the artifacts of one conversation (the agent tools and `conversationId` filter).
artifactSchema.index({ organizationId: 1, conversationId: 1 });
// Serves: the artifacts of one chain run (the `chainRunId` filter, the step tools).
artifactSchema.index({ organizationId: 1, chainRunId: 1 });

export type ArtifactDoc = DocOf<typeof artifactSchema>;
export type ArtifactVersionDoc = ArtifactDoc['versions'][number];
export const artifactModel = defineModel('Artifact', 'artifacts', artifactSchema);
