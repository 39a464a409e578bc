import { Schema } from 'mongoose';
import { defineModel, type DocOf } from '@lib/db/connection';

/**
 * A cron trigger. Its Temporal Schedule (`workflowIds.schedule`) follows this record: every write bumps
 * `revision` and sets `syncPending`; the sync (inline after the write, else the reconciler) applies the record to
 * Temporal, stamps the applied revision on the Schedule, and clears `syncPending` only while `revision` is
 * still the one it applied. A deleted trigger stays as a tombstone (`deletedAt`) until its Schedule is gone.
 */
export const scheduleTriggerSchema = new Schema(
  {
    /** The triggerId. */
    _id: { type: String, required: true },
    organizationId: { type: String, required: true },
    name: { type: String, required: true },
    description: { type: String, default: '' },
    cronExpression: { type: String, required: true },
    confirmHighFrequency: { type: Boolean, default: false },
    creatorUserId: { type: String, required: true },
    revision: { type: Number, default: 1 },
    syncPending: { type: Boolean, default: true },
    deletedAt: { type: Date, default: null },
  },
  { timestamps: true, versionKey: false },
);
// Serves: the organization's schedules, oldest first.
scheduleTriggerSchema.index({ organizationId: 1, createdAt: 1 });
// Serves: the reconciler's sweep for records whose Schedule may not match them yet.
scheduleTriggerSchema.index({ syncPending: 1, updatedAt: 1 });

export type ScheduleTriggerDoc = DocOf<typeof scheduleTriggerSchema>;
export const scheduleTriggerModel = defineModel(
  'ScheduleTrigger',
  'schedule_triggers',
  scheduleTriggerSchema,
);
