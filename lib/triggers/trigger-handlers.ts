import type { ChainRunInput, TriggerHandlerInput, TriggerHandlerOutcome, TriggerSource } from '@contracts';
import { memberContext } from '@lib/auth/authenticator';
import type { ChainRunsService } from '@lib/chains/chain-runs.service';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import { AppError } from '@lib/errors';
import { derivedId } from '@lib/ids';
import type { Logger } from '@lib/logger';
import type { Tenants } from '@lib/db/tenants';
import type { MemberDoc } from '@lib/users/member.schema';
import type { HandlerRunDoc } from './handler-run.schema';
import type { HandlerPlan, PlanHandler } from './handler-plan';
import type { TriggersStore } from './store';

export interface TriggerHandlerDeps {
  repos: Tenants<TriggersStore>;
  conversations: Pick<ConversationsService, 'create'>;
  chainRuns: Pick<ChainRunsService, 'startRun' | 'createRun' | 'firstExecution' | 'statusOf' | 'failPending'>;
  /** The users feature: a handler runs with its creator's rights, while they are a member. */
  members: { member(organizationId: string, userId: string): Promise<MemberDoc | null> };
  logger: Logger;
  plans: Record<TriggerSource, PlanHandler>;
}

/** The execution's record id: one per handler and event. */
export const handlerRunId = (i: TriggerHandlerInput) =>
  derivedId('thr', [i.organizationId, i.source, i.parentId, i.eventKey, i.handlerId]);

/** The chain run a chain handler's execution starts. */
const runIdOf = (handlerRunId: string) => derivedId('run', ['trigger-run', handlerRunId]);

function outcomeOf(run: HandlerRunDoc, execution?: ChainRunInput | null): TriggerHandlerOutcome {
  return run.status === 'failed'
    ? { status: 'failed', statusMessage: run.statusMessage ?? 'failed' }
    : { status: 'started', runId: run.runId!, ...(execution ? { execution } : {}) };
}

/**
 * Runs the handlers of schedule fires and webhook deliveries, each at most once per event: an execution's record
 * (lib/triggers/handler-runs.repository.ts; created and updated only here, removed with their schedule or webhook)
 * says whether an earlier attempt started it.
 */
export class TriggerHandlers {
  constructor(private readonly deps: TriggerHandlerDeps) {}

  /** Starts what the plan says; the chain run id and the turn's request id derive from the execution's id, so a
   * retry finds what the first attempt started. `inlineIn`: see run(). */
  private async start(
    input: TriggerHandlerInput,
    id: string,
    plan: HandlerPlan,
    firstAttempt: boolean,
    inlineIn?: string,
  ): Promise<{ done: HandlerRunDoc | null; execution?: ChainRunInput }> {
    const { deps } = this;
    const runs = deps.repos.tenant(input.organizationId).handlerRuns;
    // A first attempt (it just created the execution's record) has started nothing yet: no run to look up; nor
    // has a run that its caller's workflow runs itself, which starts once that workflow has the execution.
    const [member, existing] = await Promise.all([
      deps.members.member(input.organizationId, plan.creatorUserId),
      plan.chain && !firstAttempt && !inlineIn
        ? deps.chainRuns.statusOf(input.organizationId, runIdOf(id))
        : null,
    ]);
    if (!member)
      return {
        done: await runs.failed(id, "the handler's creator is no longer a member of the organization"),
      };
    if (plan.agent) {
      const requestId = `trigger-${id}`;
      const { conversationId } = await deps.conversations.create(
        memberContext(member, 'session'),
        {
          agentId: plan.agent.agentId,
          title: plan.agent.title,
          message: plan.agent.message,
          requestId,
        },
        { background: true },
      );
      return { done: await runs.started(id, conversationId, requestId) };
    }
    const runId = runIdOf(id);
    const start = {
      actionChainId: plan.chain!.actionChainId,
      payload: plan.chain!.payload,
      triggerType: input.source,
      startedByUserId: plan.creatorUserId,
      runId,
    };
    if (inlineIn) {
      const { input: execution } = await deps.chainRuns.createRun(input.organizationId, {
        ...start,
        firstExecutionWorkflowId: inlineIn,
      });
      return { done: await runs.started(id, runId, null), execution };
    }
    // A run already past pending was started by an earlier attempt; starting it again would re-run it.
    if (!existing || existing === 'pending')
      await deps.chainRuns.startRun(input.organizationId, {
        ...start,
        triggerId: input.parentId,
        // A start that fails (Temporal unreachable) leaves the run pending: this activity's retry starts it.
        retriedByCaller: true,
      });
    return { done: await runs.started(id, runId, null) };
  }

  /**
   * Runs one handler for one schedule fire or webhook delivery, at most once. A refusal that will not change (the
   * target is gone, the creator may no longer use it, the payload does not fit the chain) is recorded as a
   * failed execution; an outage or a full organization (429) is thrown and retried.
   *
   * `inlineIn`, a workflow's id: that workflow runs a chain handler's run itself (a webhook delivery with this
   * one handler). The run is created, not started, and its first execution comes back with the outcome.
   */
  async run(input: TriggerHandlerInput, inlineIn?: string): Promise<TriggerHandlerOutcome> {
    const { deps } = this;
    const plan = await deps.plans[input.source](input);
    if (!plan) return { status: 'skipped', statusMessage: 'the handler was deleted' };
    const id = handlerRunId(input);
    const runs = deps.repos.tenant(input.organizationId).handlerRuns;
    const { doc: run, created } = await runs.open(id, {
      source: input.source,
      parentId: input.parentId,
      eventKey: input.eventKey,
      handlerId: input.handlerId,
      handlerType: plan.handlerType,
    });
    if (run.status !== 'starting') {
      // The workflow lost this activity's answer (its worker stopped before recording it): it still has to run it.
      const execution =
        inlineIn && run.status === 'started' && plan.chain
          ? await deps.chainRuns.firstExecution(input.organizationId, run.runId!, inlineIn)
          : null;
      return outcomeOf(run, execution);
    }
    if (plan.refusal) return outcomeOf((await runs.failed(id, plan.refusal))!);
    try {
      const { done, execution } = await this.start(input, id, plan, created, inlineIn);
      const outcome = outcomeOf(done!, execution);
      deps.logger.info({ ...input, outcome: outcomeOf(done!) }, 'trigger handler ran');
      return outcome;
    } catch (err) {
      if (!(err instanceof AppError) || err.status === 429) throw err;
      return outcomeOf((await runs.failed(id, err.message))!);
    }
  }

  /** Records an execution whose start failed through all its retries, and the chain run it could not start. */
  async fail(input: TriggerHandlerInput, statusMessage: string): Promise<void> {
    const id = handlerRunId(input);
    // Left pending by the failed starts (retriedByCaller); a pending run nobody starts would wait forever.
    await this.deps.chainRuns.failPending(input.organizationId, runIdOf(id), statusMessage);
    const runs = this.deps.repos.tenant(input.organizationId).handlerRuns;
    const run = await runs.get(id);
    if (run?.status === 'starting') await runs.failed(run._id, statusMessage);
  }
}

/** Records each handler of an event that will not run (a schedule fire beyond its organization's bound) as
 * skipped, with why. */
export async function recordSkipped(
  repos: Tenants<TriggersStore>,
  event: Omit<TriggerHandlerInput, 'handlerId'>,
  handlers: ReadonlyArray<{ _id: string; handlerType: string }>,
  statusMessage: string,
): Promise<void> {
  const runs = repos.tenant(event.organizationId).handlerRuns;
  for (const handler of handlers) {
    const id = handlerRunId({ ...event, handlerId: handler._id });
    await runs.open(id, {
      source: event.source,
      parentId: event.parentId,
      eventKey: event.eventKey,
      handlerId: handler._id,
      handlerType: handler.handlerType,
    });
    await runs.skipped(id, statusMessage);
  }
}
