import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import type { PageRequest } from '@lib/paging';
import { chainModel, stepModel, type ChainDoc, type StepDoc } from './chain.schema';

export const CHAIN_ORDER_FIELDS = { created_at: 'createdAt', updated_at: 'updatedAt' } as const;
export type ChainOrderField = keyof typeof CHAIN_ORDER_FIELDS;

export type ChainFields = Pick<ChainDoc, 'name' | 'description' | 'llmInstructions' | 'inputType'>;
export type StepFields = Omit<
  StepDoc,
  '_id' | 'organizationId' | 'actionChainId' | 'createdAt' | 'updatedAt'
>;

/** Action chains and their steps, of one organization. */
export class ChainsRepository extends TenantRepository {
  private readonly chains = this.db.model(chainModel);
  private readonly steps = this.db.model(stepModel);

  list(query: PageRequest & { orderBy: ChainOrderField; descending: boolean; inputType?: string }) {
    const filter = this.scope<ChainDoc>(query.inputType ? { inputType: query.inputType } : {});
    const dir = query.descending ? -1 : 1;
    return findPage(this.chains, filter, { [CHAIN_ORDER_FIELDS[query.orderBy]]: dir, _id: dir }, query);
  }

  get(actionChainId: string) {
    return this.findOwned(this.chains, actionChainId);
  }

  getMany(actionChainIds: string[]) {
    return this.chains.find(this.scope<ChainDoc>({ _id: { $in: actionChainIds } })).lean<ChainDoc[]>();
  }

  /** Chains whose name is one of `names` (an app manifest names its workflows). */
  listByNames(names: string[]) {
    return this.chains.find(this.scope<ChainDoc>({ name: { $in: names } })).lean<ChainDoc[]>();
  }

  async create(actionChainId: string, creatorUserId: string, fields: ChainFields): Promise<ChainDoc> {
    const doc = await this.chains.create({
      ...fields,
      _id: actionChainId,
      organizationId: this.organizationId,
      creatorUserId,
    });
    return doc.toObject();
  }

  update(actionChainId: string, fields: Partial<ChainFields>) {
    return this.updateOwned(this.chains, actionChainId, { $set: fields });
  }

  /** Bumps updatedAt: a change of a step is a change of its chain. */
  touch(actionChainId: string) {
    return this.updateOwned(this.chains, actionChainId, { $set: { updatedAt: new Date() } });
  }

  remove(actionChainId: string) {
    return this.deleteOwned(this.chains, actionChainId);
  }

  /** Gives every chain of `fromUserId` to `toUserId` (a removed member's chains); returns how many. */
  async reassign(fromUserId: string, toUserId: string): Promise<number> {
    const res = await this.chains.updateMany(this.scope<ChainDoc>({ creatorUserId: fromUserId }), {
      $set: { creatorUserId: toUserId },
    });
    return res.modifiedCount;
  }

  listSteps(actionChainId: string) {
    return this.steps
      .find(this.scope<StepDoc>({ actionChainId }))
      .sort({ stepOrder: 1, createdAt: 1, _id: 1 })
      .lean<StepDoc[]>();
  }

  /** A step by its id alone (the caller checks which chain it belongs to). */
  getStepById(stepId: string) {
    return this.findOwned(this.steps, stepId);
  }

  async getStep(actionChainId: string, stepId: string) {
    const step = await this.findOwned(this.steps, stepId);
    return step?.actionChainId === actionChainId ? step : null;
  }

  async createStep(actionChainId: string, stepId: string, fields: StepFields): Promise<StepDoc> {
    const doc = await this.steps.create({
      ...fields,
      _id: stepId,
      organizationId: this.organizationId,
      actionChainId,
    });
    return doc.toObject();
  }

  replaceStep(actionChainId: string, stepId: string, fields: StepFields) {
    return this.steps
      .findOneAndUpdate(
        { _id: stepId, organizationId: this.organizationId, actionChainId },
        { $set: fields },
        { new: true },
      )
      .lean<StepDoc>();
  }

  async removeStep(actionChainId: string, stepId: string): Promise<boolean> {
    const res = await this.steps.deleteOne({
      _id: stepId,
      organizationId: this.organizationId,
      actionChainId,
    });
    return res.deletedCount === 1;
  }

  async removeSteps(actionChainId: string) {
    await this.steps.deleteMany(this.scope<StepDoc>({ actionChainId }));
  }
}
