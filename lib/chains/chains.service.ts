import type { RequestContext } from '@lib/auth/context';
import { notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, parseOrderBy, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { ChainDoc, StepDoc } from './chain.schema';
import type { ChainFields, ChainOrderField, StepFields } from './chains.repository';
import { checkFileInput, checkSchemaSize, stepFieldsFromBody, type StepBody } from './step-fields';
import { pickView } from '@lib/db/view';
import { STEP_PLAIN_FIELDS, toChainView, toStepView } from './views';
import type { ChainsStore } from './store';

export interface ChainBody extends Omit<ChainFields, 'inputType'> {
  inputType?: 'json' | 'file';
  steps?: StepBody[];
}

/**
 * Action chains and their steps. Every member reads chains (chains.use); creating, changing and deleting them
 * needs chains.manage (admins and owners), which the routes require. An action chain is also the service's
 * "workflow": schedule and ETL handlers, app manifests and `reassignWorkflowsTo` name chains by their id.
 */
export class ChainsService {
  constructor(
    private readonly repos: Tenants<ChainsStore>,
    /** CHAIN_SCHEMA_MAX_NODES (its default unless given) */
    private readonly schemaMaxNodes = 2000,
  ) {}

  private repo(ctx: { organizationId: string }) {
    return this.repos.tenant(ctx.organizationId).chains;
  }

  async chain(ctx: { organizationId: string }, actionChainId: string): Promise<ChainDoc> {
    const chain = await this.repo(ctx).get(actionChainId);
    if (!chain) throw notFound('action chain');
    return chain;
  }

  /** The organization's chains among `actionChainIds`, for what names them (a handler shows its chain's name). */
  getMany(organizationId: string, actionChainIds: string[]): Promise<ChainDoc[]> {
    return this.repo({ organizationId }).getMany(actionChainIds);
  }

  async list(ctx: RequestContext, opts: PageRequest & { orderBy?: string; inputType?: string }) {
    const { items, total } = await this.repo(ctx).list({
      ...opts,
      ...parseOrderBy<ChainOrderField>(opts.orderBy, 'created_at'),
    });
    return page(
      items.map((c) => toChainView(c)),
      total,
      opts.offset,
    );
  }

  async get(ctx: RequestContext, actionChainId: string) {
    const chain = await this.chain(ctx, actionChainId);
    return toChainView(chain, await this.repo(ctx).listSteps(actionChainId));
  }

  async create(ctx: RequestContext, body: ChainBody) {
    const inputType = body.inputType ?? 'json';
    checkSchemaSize(body.steps ?? [], this.schemaMaxNodes);
    const steps = (body.steps ?? []).map(stepFieldsFromBody);
    checkFileInput(inputType, steps);
    const actionChainId = newId('chn');
    const chain = await this.repo(ctx).create(actionChainId, ctx.userId, {
      name: body.name,
      description: body.description,
      llmInstructions: body.llmInstructions,
      inputType,
    });
    const created = await this.createSteps(ctx, actionChainId, steps);
    return toChainView(chain, created);
  }

  /** Replaces the chain's fields and, when `steps` is sent, all of its steps (and their attachments). */
  async update(ctx: RequestContext, actionChainId: string, body: ChainBody) {
    await this.chain(ctx, actionChainId);
    const inputType = body.inputType ?? 'json';
    const tenant = this.repos.tenant(ctx.organizationId);
    checkSchemaSize(body.steps ?? [], this.schemaMaxNodes);
    const newSteps = body.steps?.map(stepFieldsFromBody);
    checkFileInput(inputType, newSteps ?? (await tenant.chains.listSteps(actionChainId)));
    const chain = await tenant.chains.update(actionChainId, {
      name: body.name,
      description: body.description,
      llmInstructions: body.llmInstructions,
      inputType,
    });
    if (!chain) throw notFound('action chain');
    if (newSteps) {
      for (const old of await tenant.chains.listSteps(actionChainId))
        await tenant.chainAttachments.removeForStep(old._id);
      await tenant.chains.removeSteps(actionChainId);
      await this.createSteps(ctx, actionChainId, newSteps);
    }
    return toChainView(chain, await tenant.chains.listSteps(actionChainId));
  }

  /** Deletes the chain, its steps, their attachments, its agent attachments and its runs. */
  async remove(ctx: RequestContext, actionChainId: string) {
    await this.chain(ctx, actionChainId);
    const tenant = this.repos.tenant(ctx.organizationId);
    await tenant.chainAttachments.removeForChain(actionChainId);
    await tenant.chainRuns.removeForChain(actionChainId);
    await tenant.chains.removeSteps(actionChainId);
    await tenant.chains.remove(actionChainId);
    return { actionChainId, deleted: true };
  }

  private async createSteps(ctx: RequestContext, actionChainId: string, steps: StepFields[]) {
    const created: StepDoc[] = [];
    for (const fields of steps)
      created.push(await this.repo(ctx).createStep(actionChainId, newId('stp'), fields));
    return created.sort((a, b) => a.stepOrder - b.stepOrder);
  }

  async listSteps(ctx: RequestContext, actionChainId: string) {
    await this.chain(ctx, actionChainId);
    return (await this.repo(ctx).listSteps(actionChainId)).map(toStepView);
  }

  async step(ctx: { organizationId: string }, actionChainId: string, stepId: string): Promise<StepDoc> {
    await this.chain(ctx, actionChainId);
    const step = await this.repo(ctx).getStep(actionChainId, stepId);
    if (!step) throw notFound('step');
    return step;
  }

  async getStep(ctx: RequestContext, actionChainId: string, stepId: string) {
    return toStepView(await this.step(ctx, actionChainId, stepId));
  }

  /** The chain's steps as they would be after replacing (or adding, or removing) one: for the file check. */
  private async checkWith(ctx: RequestContext, chain: ChainDoc, stepId: string | null, fields?: StepFields) {
    const others = (await this.repo(ctx).listSteps(chain._id)).filter((s) => s._id !== stepId);
    checkFileInput(chain.inputType, fields ? [...others, fields] : others);
  }

  async createStep(ctx: RequestContext, actionChainId: string, body: StepBody) {
    const chain = await this.chain(ctx, actionChainId);
    checkSchemaSize([body], this.schemaMaxNodes);
    const fields = stepFieldsFromBody(body);
    await this.checkWith(ctx, chain, null, fields);
    const step = await this.repo(ctx).createStep(actionChainId, newId('stp'), fields);
    await this.repo(ctx).touch(actionChainId);
    return toStepView(step);
  }

  /** Optional fields the body leaves out keep their stored values (docs/architecture.md "API conventions"); `null` clears one. */
  async updateStep(ctx: RequestContext, actionChainId: string, stepId: string, body: StepBody) {
    const chain = await this.chain(ctx, actionChainId);
    checkSchemaSize([body], this.schemaMaxNodes);
    const fields = stepFieldsFromBody({
      ...storedStepBody(await this.step(ctx, actionChainId, stepId)),
      ...body,
    });
    await this.checkWith(ctx, chain, stepId, fields);
    const step = await this.repo(ctx).replaceStep(actionChainId, stepId, fields);
    if (!step) throw notFound('step');
    await this.repo(ctx).touch(actionChainId);
    return toStepView(step);
  }

  async removeStep(ctx: RequestContext, actionChainId: string, stepId: string) {
    const chain = await this.chain(ctx, actionChainId);
    await this.step(ctx, actionChainId, stepId);
    await this.checkWith(ctx, chain, stepId);
    await this.repos.tenant(ctx.organizationId).chainAttachments.removeForStep(stepId);
    if (!(await this.repo(ctx).removeStep(actionChainId, stepId))) throw notFound('step');
    await this.repo(ctx).touch(actionChainId);
    return { actionChainId, stepId, deleted: true };
  }

  /** A chain's steps as stored, with no access check (an agent's model tools). */
  storedSteps(organizationId: string, actionChainId: string): Promise<StepDoc[]> {
    return this.repo({ organizationId }).listSteps(actionChainId);
  }

  /** A removed member's chains go to another member (lib/users); how many moved. */
  reassign(organizationId: string, fromUserId: string, toUserId: string): Promise<number> {
    return this.repo({ organizationId }).reassign(fromUserId, toUserId);
  }
}

/** A stored step as the body that would write it again. */
function storedStepBody(step: StepDoc): StepBody {
  const schema = (json: string | null | undefined) =>
    json ? (JSON.parse(json) as Record<string, unknown>) : null;
  return {
    ...pickView(step, STEP_PLAIN_FIELDS),
    inputSchema: schema(step.inputSchemaJson),
    outputSchema: schema(step.outputSchemaJson),
  };
}
