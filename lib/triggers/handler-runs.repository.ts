import { createOrFind } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { handlerRunModel, type HandlerRunDoc } from './handler-run.schema';

export type NewHandlerRun = Pick<
  HandlerRunDoc,
  'source' | 'parentId' | 'eventKey' | 'handlerId' | 'handlerType'
>;

/** Handler executions of one organization's schedules and webhooks. */
export class HandlerRunsRepository extends TenantRepository {
  private readonly model = this.db.model(handlerRunModel);

  get(id: string) {
    return this.findOwned(this.model, id);
  }

  /** The execution with this id, created `starting` when it is not recorded yet (`created`: by this call). Most
   * calls are an execution's first attempt: the insert goes first. */
  open(id: string, fields: NewHandlerRun) {
    return createOrFind(
      () => this.get(id),
      async () =>
        (
          await this.model.create({
            ...fields,
            _id: id,
            organizationId: this.organizationId,
            status: 'starting',
            startedAt: new Date(),
          })
        ).toObject(),
    );
  }

  started(id: string, runId: string, requestId: string | null) {
    return this.updateOwned(this.model, id, { $set: { status: 'started', runId, requestId } });
  }

  failed(id: string, statusMessage: string) {
    return this.updateOwned(this.model, id, {
      $set: { status: 'failed', statusMessage, endedAt: new Date() },
    });
  }

  /** An execution that was never started (its fire came while the organization's backlog was full). */
  async skipped(id: string, statusMessage: string) {
    await this.model.updateOne(
      { _id: id, organizationId: this.organizationId, status: 'starting' },
      { $set: { status: 'skipped', statusMessage, endedAt: new Date() } },
    );
  }

  /** The most recent execution of any handler of a schedule or webhook. */
  latest(parentId: string) {
    return this.model
      .findOne(this.scope<HandlerRunDoc>({ parentId }))
      .sort({ startedAt: -1, _id: -1 })
      .lean<HandlerRunDoc>();
  }

  /** The executions of one fire or delivery. */
  forEvent(parentId: string, eventKey: string) {
    return this.model
      .find(this.scope<HandlerRunDoc>({ parentId, eventKey }))
      .sort({ startedAt: 1, _id: 1 })
      .lean<HandlerRunDoc[]>();
  }

  async removeFor(parentId: string) {
    await this.model.deleteMany(this.scope<HandlerRunDoc>({ parentId }));
  }
}
