import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import { scheduleHandlerModel, type ScheduleHandlerDoc } from './schedule-handler.schema';

export type ScheduleHandlerFields = Pick<
  ScheduleHandlerDoc,
  'handlerType' | 'agentId' | 'actionChainId' | 'workflowId' | 'instructions' | 'inputMappingJson'
>;

/** Handlers of one organization's schedule triggers. */
export class ScheduleHandlersRepository extends TenantRepository {
  private readonly model = this.db.model(scheduleHandlerModel);

  async get(triggerId: string, handlerId: string) {
    const doc = await this.findOwned(this.model, handlerId);
    return doc?.triggerId === triggerId ? doc : null;
  }

  list(triggerId: string, page: PageRequest) {
    return findPage(
      this.model,
      this.scope<ScheduleHandlerDoc>({ triggerId }),
      { createdAt: 1, _id: 1 },
      page,
    );
  }

  /** Every handler of a trigger (what a fire runs). */
  all(triggerId: string) {
    return this.model
      .find(this.scope<ScheduleHandlerDoc>({ triggerId }))
      .sort({ createdAt: 1, _id: 1 })
      .lean<ScheduleHandlerDoc[]>();
  }

  /** The triggers with a handler that runs this agent, chain or workflow. */
  async triggerIdsFor(target: Partial<Pick<ScheduleHandlerDoc, 'agentId' | 'actionChainId' | 'workflowId'>>) {
    const ids: string[] = await this.model.distinct('triggerId', this.scope<ScheduleHandlerDoc>(target));
    return ids;
  }

  async create(handlerId: string, triggerId: string, creatorUserId: string, fields: ScheduleHandlerFields) {
    const doc = await this.model.create({
      ...fields,
      _id: handlerId,
      organizationId: this.organizationId,
      triggerId,
      creatorUserId,
    });
    return doc.toObject();
  }

  update(
    triggerId: string,
    handlerId: string,
    fields: Pick<ScheduleHandlerDoc, 'instructions'> & Partial<Pick<ScheduleHandlerDoc, 'inputMappingJson'>>,
  ) {
    return this.model
      .findOneAndUpdate(
        { _id: handlerId, organizationId: this.organizationId, triggerId },
        { $set: fields },
        { new: true },
      )
      .lean<ScheduleHandlerDoc>();
  }

  async remove(triggerId: string, handlerId: string): Promise<boolean> {
    const res = await this.model.deleteOne({
      _id: handlerId,
      organizationId: this.organizationId,
      triggerId,
    });
    return res.deletedCount === 1;
  }

  async removeForTrigger(triggerId: string) {
    await this.model.deleteMany(this.scope<ScheduleHandlerDoc>({ triggerId }));
  }
}
