import { undoOnFailure, type Admission } from '@lib/admission/admission';
import type { RequestContext } from '@lib/auth/context';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import { badRequest, conflict, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import type { TemporalDeps } from '@lib/temporal/client';
import type { AnalysisDoc } from './analysis.schema';
import { admitRun, cancelRun, removeConversationAnalyses, startRun } from './analysis-runs';
import { toAnalysisView } from './analyses.repository';
import type { AgentLookup } from './ports';
import type { AnalysesStore } from './store';

export interface AnalysisCreateBody {
  title: string;
  description?: string;
}

export interface AnalysisUpdateBody {
  title?: string;
  description?: string;
  /** run again even when the question is unchanged (e.g. after a failure, or when the data changed) */
  rerun?: boolean;
}

const title = (raw: string) => {
  const trimmed = raw.trim();
  if (!trimmed) throw badRequest('title must not be blank');
  return trimmed;
};

/**
 * Analyses of a conversation (see analysis-rules.ts). Whoever may read the conversation reads and changes its
 * analyses; anything else is 404, like a missing conversation.
 */
export class AnalysesService {
  constructor(
    private readonly repos: Tenants<AnalysesStore>,
    private readonly conversations: Pick<ConversationsService, 'load'>,
    private readonly agents: AgentLookup,
    private readonly temporal: TemporalDeps,
    private readonly admission: Pick<Admission, 'admit' | 'startCounted'>,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).analyses;
  }

  private async analysis(ctx: RequestContext, conversationId: string, analysisId: string) {
    await this.conversations.load(ctx, conversationId);
    const analysis = await this.repo(ctx).get(analysisId);
    if (!analysis || analysis.conversationId !== conversationId) throw notFound('analysis');
    return analysis;
  }

  /** An analysis is worked on by the conversation's agent: it must still exist. */
  private async requireAgent(ctx: RequestContext, agentId: string) {
    if (!(await this.agents.find(ctx.organizationId, agentId)))
      throw conflict("the conversation's agent was deleted; no agent can work on an analysis here");
  }

  async create(ctx: RequestContext, conversationId: string, body: AnalysisCreateBody) {
    const conversation = await this.conversations.load(ctx, conversationId);
    await this.requireAgent(ctx, conversation.agentId);
    const analysisId = newId('ana');
    const admitted = await admitRun(this.admission, ctx.organizationId, analysisId, 1);
    const analysis = await undoOnFailure(admitted, () =>
      this.repo(ctx).create(analysisId, {
        conversationId,
        agentId: conversation.agentId,
        creatorUserId: ctx.userId,
        title: title(body.title),
        description: (body.description ?? '').trim(),
      }),
    );
    try {
      await startRun(this.temporal, this.admission, analysis, admitted);
    } catch (err) {
      // Not started: nothing would ever run it.
      await this.repo(ctx).remove(analysis._id);
      throw err;
    }
    return toAnalysisView(analysis);
  }

  async list(ctx: RequestContext, conversationId: string, pageRequest: PageRequest) {
    await this.conversations.load(ctx, conversationId);
    const { items, total } = await this.repo(ctx).listForConversation(conversationId, pageRequest);
    return page(items.map(toAnalysisView), total, pageRequest.offset);
  }

  async get(ctx: RequestContext, conversationId: string, analysisId: string) {
    return toAnalysisView(await this.analysis(ctx, conversationId, analysisId));
  }

  /**
   * Changes the title and/or description. A changed question (or `rerun: true`) runs the analysis again: the
   * run under way is cancelled, the result and error are cleared, and the next run starts (`run` + 1). The
   * same values again change nothing.
   */
  async update(ctx: RequestContext, conversationId: string, analysisId: string, body: AnalysisUpdateBody) {
    const before = await this.analysis(ctx, conversationId, analysisId);
    const set: Partial<Pick<AnalysisDoc, 'title' | 'description'>> = {};
    if (body.title !== undefined) set.title = title(body.title);
    if (body.description !== undefined) set.description = body.description.trim();
    const changed =
      (set.title !== undefined && set.title !== before.title) ||
      (set.description !== undefined && set.description !== before.description);
    const rerun = changed || body.rerun === true;
    if (rerun) await this.requireAgent(ctx, before.agentId);
    const admitted = rerun
      ? await admitRun(this.admission, ctx.organizationId, analysisId, before.generation + 1)
      : undefined;
    const updated = await this.repo(ctx).changeQuestion(analysisId, set, rerun);
    if (!updated) {
      await admitted?.undo();
      throw notFound('analysis');
    }
    if (rerun) {
      await cancelRun(this.temporal, before);
      await startRun(this.temporal, this.admission, updated, admitted);
    }
    return toAnalysisView(updated);
  }

  /** Removes the analysis and cancels its run if it is still going. Its result artifact stays with the
   * conversation. */
  async remove(ctx: RequestContext, conversationId: string, analysisId: string) {
    const analysis = await this.analysis(ctx, conversationId, analysisId);
    await this.repo(ctx).remove(analysisId);
    await cancelRun(this.temporal, analysis);
    return { organizationId: ctx.organizationId, conversationId, analysisId };
  }

  /** The analyses of a deleted conversation go with it; their runs stop. */
  async removeForConversation(organizationId: string, conversationId: string): Promise<void> {
    await removeConversationAnalyses(this.repos, this.temporal, organizationId, conversationId);
  }
}
