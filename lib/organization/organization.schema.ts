import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

const pendingChangeSchema = new Schema(
  {
    changeId: { type: String, required: true },
    field: { type: String, required: true, enum: ['name', 'abn'] as const },
    value: { type: String, required: true },
    requestedByUserId: { type: String, required: true },
    requestedAt: { type: Date, required: true },
  },
  { _id: false },
);

export const organizationSchema = new Schema(
  {
    _id: { type: String, required: true },
    name: { type: String, required: true },
    tradingName: String,
    abn: String,
    email: String,
    phone: String,
    licence: String,
    isRealEstate: Boolean,
    legalAddress: { type: Schema.Types.Mixed },
    tradingAddress: { type: Schema.Types.Mixed },
    pendingChanges: { type: [pendingChangeSchema], default: [] },
    /** Raised by every settings change that was computed from a read (see OrganizationRepository.updateAt). */
    revision: { type: Number, default: 0 },
    /** The default user group. A single field keeps "at most one default" true under concurrent writes. */
    defaultUserGroupId: { type: String, default: null },
    /** Set by operators: only such organizations may publish public agents and knowledge bases. */
    hostsPublicContent: { type: Boolean, default: false },
    /** Set by operators (`cli admission set`): this organization's own bounds of unfinished background work, by
     * kind (lib/admission/kinds.ts); a kind not here has the configured default. */
    admissionLimits: { type: Schema.Types.Mixed, default: () => ({}) },
    billingVisibility: { type: String, default: 'all', enum: ['all', 'owners'] as const },
    subscription: {
      plan: { type: String, default: 'free' },
      status: { type: String, default: 'active' },
    },
  },
  { timestamps: true, minimize: false, versionKey: false },
);

export type OrganizationDoc = DocOf<typeof organizationSchema>;
export type PendingChange = DocOf<typeof pendingChangeSchema>;
export const organizationModel = defineModel('Organization', 'organizations', organizationSchema);
