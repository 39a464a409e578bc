import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import { scheduleTriggerModel, type ScheduleTriggerDoc } from './schedule-trigger.schema';

export type TriggerFields = Pick<
  ScheduleTriggerDoc,
  'name' | 'description' | 'cronExpression' | 'confirmHighFrequency'
>;

/** Schedule triggers of one organization. Reads skip tombstones unless they say otherwise. */
export class ScheduleTriggersRepository extends TenantRepository {
  private readonly model = this.db.model(scheduleTriggerModel);

  async get(triggerId: string) {
    const doc = await this.getIncludingDeleted(triggerId);
    return doc && !doc.deletedAt ? doc : null;
  }

  getIncludingDeleted(triggerId: string) {
    return this.findOwned(this.model, triggerId);
  }

  list(page: PageRequest, triggerIds?: string[]) {
    const filter = this.scope<ScheduleTriggerDoc>({ deletedAt: null });
    if (triggerIds) filter._id = { $in: triggerIds };
    return findPage(this.model, filter, { createdAt: 1, _id: 1 }, page);
  }

  async create(triggerId: string, creatorUserId: string, fields: TriggerFields) {
    const doc = await this.model.create({
      ...fields,
      _id: triggerId,
      organizationId: this.organizationId,
      creatorUserId,
      revision: 1,
      syncPending: true,
    });
    return doc.toObject();
  }

  /** A new revision of the trigger, to be applied to its Schedule. */
  update(triggerId: string, fields: TriggerFields) {
    return this.model
      .findOneAndUpdate(
        { _id: triggerId, organizationId: this.organizationId, deletedAt: null },
        { $set: { ...fields, syncPending: true }, $inc: { revision: 1 } },
        { new: true },
      )
      .lean<ScheduleTriggerDoc>();
  }

  /** Marks the trigger deleted (a tombstone until its Schedule is removed). */
  markDeleted(triggerId: string) {
    return this.model
      .findOneAndUpdate(
        { _id: triggerId, organizationId: this.organizationId, deletedAt: null },
        { $set: { deletedAt: new Date(), syncPending: true }, $inc: { revision: 1 } },
        { new: true },
      )
      .lean<ScheduleTriggerDoc>();
  }

  /** The Schedule matches `revision`: clears syncPending unless the record changed meanwhile. */
  async markSynced(triggerId: string, revision: number): Promise<boolean> {
    const res = await this.model.updateOne(
      { _id: triggerId, organizationId: this.organizationId, revision },
      { $set: { syncPending: false } },
      { timestamps: false },
    );
    return res.modifiedCount === 1 || res.matchedCount === 1;
  }

  /** Removes a tombstone once its Schedule is gone. */
  async purge(triggerId: string) {
    await this.model.deleteOne({
      _id: triggerId,
      organizationId: this.organizationId,
      deletedAt: { $ne: null },
    });
  }
}
