import type { Database } from '@lib/db/connection';
import { scheduleTriggerModel, type ScheduleTriggerDoc } from './schedule-trigger.schema';

/** The schedule reconciler sweeps every organization. */
export class SchedulesCrossOrg {
  constructor(private readonly db: Database) {}

  /** Triggers whose Temporal Schedule may not match their record yet, changed before `before` (a write newer
   * than that is still being synced by its request). */
  listScheduleTriggersToSyncCrossOrg(before: Date, limit: number) {
    return this.db
      .model(scheduleTriggerModel)
      .find({ syncPending: true, updatedAt: { $lt: before } })
      .sort({ updatedAt: 1 })
      .limit(limit)
      .select({ _id: 1, organizationId: 1 })
      .lean<Array<Pick<ScheduleTriggerDoc, '_id' | 'organizationId'>>>();
  }
}
