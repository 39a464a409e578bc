import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/**
 * The approval of one artifact version's app manifest (ApprovedAppManifest). Approval is per version: a new
 * version has no approval until it is approved itself.
 */
export const appApprovalSchema = new Schema(
  {
    /**
     * `<artifactId>/<versionId>` (reads check the organization). Approvals made before had the versionId alone
     * (and no versionId field); they are read only together with their artifactId.
     */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    artifactId: { type: String, required: true },
    versionId: { type: String, default: null },
    /** The manifest as extracted from the version's HTML at approval time: its workflows and tables. */
    manifestWorkflows: { type: [String], required: true },
    manifestTables: {
      type: [new Schema({ table: String, access: String }, { _id: false })],
      required: true,
    },
    manifestSha256: { type: String, required: true },
    /** Declared workflow → the workflow id it was bound to at approval (a list: ids are not safe as keys). */
    workflowBindings: {
      type: [new Schema({ workflow: String, workflowId: String }, { _id: false })],
      required: true,
    },
    approvedBy: { type: String, required: true },
    approvedAt: { type: Date, required: true },
  },
  { versionKey: false },
);

export type AppApprovalDoc = DocOf<typeof appApprovalSchema>;
export const appApprovalModel = defineModel('AppApproval', 'app_approvals', appApprovalSchema);
