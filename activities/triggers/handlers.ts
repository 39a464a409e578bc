import type { TriggerHandlerInput, TriggerHandlerOutcome, TriggerSource } from '@contracts';
import { memberContext } from '@lib/auth/authenticator';
import type { ChainRunsService } from '@lib/chains/chain-runs.service';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import { AppError } from '@lib/errors';
import type { Logger } from '@lib/logger';
import type { Repositories } from '@lib/repositories';
import type { HandlerRunDoc } from '@lib/triggers/handler-run.schema';
import { derivedId } from '@lib/ids';
import type { HandlerPlan, PlanHandler } from '@lib/triggers/handler-plan';

export interface TriggerHandlerDeps {
  repos: Repositories;
  conversations: Pick<ConversationsService, 'create'>;
  chainRuns: Pick<ChainRunsService, 'startRun'>;
  logger: Logger;
  plans: Record<TriggerSource, PlanHandler>;
}

/** The execution's record id: one per handler and event. */
export const handlerRunId = (i: TriggerHandlerInput) =>
  derivedId('thr', [i.organizationId, i.source, i.parentId, i.eventKey, i.handlerId]);

/** The chain run a chain handler's execution starts. */
const runIdOf = (handlerRunId: string) => derivedId('run', ['trigger-run', handlerRunId]);

function outcomeOf(run: HandlerRunDoc): TriggerHandlerOutcome {
  return run.status === 'failed'
    ? { status: 'failed', statusMessage: run.statusMessage ?? 'failed' }
    : { status: 'started', runId: run.runId! };
}

export function createTriggerHandlerActivities(deps: TriggerHandlerDeps) {
  /** Starts what the plan says; the chain run id and the turn's request id derive from the execution's id, so a
   * retry finds what the first attempt started. */
  async function start(input: TriggerHandlerInput, id: string, plan: HandlerPlan, firstAttempt: boolean) {
    const tenant = deps.repos.tenant(input.organizationId);
    const runs = tenant.handlerRuns;
    // A first attempt (it just created the execution's record) has started nothing yet: no run to look up.
    const [member, existing] = await Promise.all([
      tenant.members.get(plan.creatorUserId),
      plan.chain && !firstAttempt ? tenant.chainRuns.get(runIdOf(id)) : null,
    ]);
    if (!member) return runs.failed(id, "the handler's creator is no longer a member of the organization");
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
      return runs.started(id, conversationId, requestId);
    }
    const runId = runIdOf(id);
    // A run already past pending was started by an earlier attempt; starting it again would re-run it.
    if (!existing || existing.status === 'pending')
      await deps.chainRuns.startRun(input.organizationId, {
        actionChainId: plan.chain!.actionChainId,
        payload: plan.chain!.payload,
        triggerType: input.source,
        startedByUserId: plan.creatorUserId,
        runId,
        triggerId: input.parentId,
        // A start that fails (Temporal unreachable) leaves the run pending: this activity's retry starts it.
        retriedByCaller: true,
      });
    return runs.started(id, runId, null);
  }

  return {
    /**
     * Runs one handler for one schedule fire or webhook delivery, at most once: its record (id from the handler
     * and the event) says whether an earlier attempt already started it. A refusal that will not change (the
     * target is gone, the creator may no longer use it, the payload does not fit the chain) is recorded as a
     * failed execution; an outage or a full organization (429) is thrown and retried.
     */
    async runTriggerHandler(input: TriggerHandlerInput): Promise<TriggerHandlerOutcome> {
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
      if (run.status !== 'starting') return outcomeOf(run);
      if (plan.refusal) return outcomeOf((await runs.failed(id, plan.refusal))!);
      try {
        const done = await start(input, id, plan, created);
        const outcome = outcomeOf(done!);
        deps.logger.info({ ...input, outcome }, 'trigger handler ran');
        return outcome;
      } catch (err) {
        if (!(err instanceof AppError) || err.status === 429) throw err;
        return outcomeOf((await runs.failed(id, err.message))!);
      }
    },

    /** Records an execution whose start failed through all its retries, and the chain run it could not start. */
    async failTriggerHandler(input: TriggerHandlerInput, statusMessage: string): Promise<void> {
      const tenant = deps.repos.tenant(input.organizationId);
      const id = handlerRunId(input);
      const [run, chainRun] = await Promise.all([
        tenant.handlerRuns.get(id),
        tenant.chainRuns.get(runIdOf(id)),
      ]);
      // Left pending by the failed starts (retriedByCaller); a pending run nobody starts would wait forever.
      if (chainRun?.status === 'pending')
        await tenant.chainRuns.finish(chainRun._id, chainRun.generation, 'failed', statusMessage);
      if (run?.status === 'starting') await tenant.handlerRuns.failed(run._id, statusMessage);
    },
  };
}
