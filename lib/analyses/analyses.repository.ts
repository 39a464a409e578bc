import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { iso, pickView } from '@lib/db/view';
import type { PageRequest } from '@lib/paging';
import { ACTIVE_STATUSES, type AnalysisStatus } from './analysis-rules';
import { analysisModel, type AnalysisDoc } from './analysis.schema';

export function toAnalysisView(a: AnalysisDoc) {
  return {
    analysisId: a._id,
    ...pickView(a, [
      'organizationId',
      'conversationId',
      'agentId',
      'creatorUserId',
      'title',
      'description',
      'status',
      'result',
      'artifactId',
      'artifactVersionId',
      'error',
    ]),
    run: a.generation,
    startedAt: iso(a.startedAt),
    completedAt: iso(a.completedAt),
    createdAt: iso(a.createdAt),
    updatedAt: iso(a.updatedAt),
  };
}
export type AnalysisView = ReturnType<typeof toAnalysisView>;

/** What a run writes when it ends. */
export type AnalysisOutcome =
  | { status: 'completed'; result: string; artifactId: string; artifactVersionId: string }
  | { status: 'failed'; error: string }
  | { status: 'cancelled' };

/** Fields a new run starts from. */
const FRESH_RUN = {
  status: 'queued' as AnalysisStatus,
  result: null,
  error: null,
  startedAt: null,
  completedAt: null,
};

/** Analyses of one organization; every query is scoped to it. */
export class AnalysesRepository extends TenantRepository {
  private readonly model = this.db.model(analysisModel);

  async create(
    analysisId: string,
    fields: Pick<AnalysisDoc, 'conversationId' | 'agentId' | 'creatorUserId' | 'title' | 'description'>,
  ): Promise<AnalysisDoc> {
    const doc = await this.model.create({
      ...fields,
      ...FRESH_RUN,
      _id: analysisId,
      organizationId: this.organizationId,
      generation: 1,
      artifactId: null,
      artifactVersionId: null,
    });
    return doc.toObject();
  }

  get(analysisId: string) {
    return this.findOwned(this.model, analysisId);
  }

  /** The analyses of a conversation, newest first. */
  listForConversation(conversationId: string, page: PageRequest) {
    return findPage(
      this.model,
      this.scope<AnalysisDoc>({ conversationId }),
      { createdAt: -1, _id: -1 },
      page,
    );
  }

  /** Every analysis of a conversation (its removal). */
  allForConversation(conversationId: string) {
    return this.model.find(this.scope<AnalysisDoc>({ conversationId })).lean<AnalysisDoc[]>();
  }

  /** Changes the question; with `rerun`, also starts the next generation (returned in the document). */
  changeQuestion(
    analysisId: string,
    set: Partial<Pick<AnalysisDoc, 'title' | 'description'>>,
    rerun: boolean,
  ) {
    return this.updateOwned(
      this.model,
      analysisId,
      rerun ? { $set: { ...set, ...FRESH_RUN }, $inc: { generation: 1 } } : { $set: set },
    );
  }

  /** The run of `generation` begins; null unless the analysis is at that generation and queued, or already
   * running (a retried write: startedAt stays). */
  async markRunning(analysisId: string, generation: number) {
    const filter = { _id: analysisId, organizationId: this.organizationId, generation };
    const started = await this.model
      .findOneAndUpdate(
        { ...filter, status: 'queued' },
        { $set: { status: 'running', startedAt: new Date() } },
        { new: true },
      )
      .lean<AnalysisDoc>();
    return started ?? this.model.findOne({ ...filter, status: 'running' }).lean<AnalysisDoc>();
  }

  /** Writes how the run of `generation` ended, only while that run is the current one and has not ended. */
  finish(analysisId: string, generation: number, outcome: AnalysisOutcome) {
    return this.model
      .findOneAndUpdate(
        {
          _id: analysisId,
          organizationId: this.organizationId,
          generation,
          status: { $in: ACTIVE_STATUSES },
        },
        { $set: { ...outcome, completedAt: new Date() } },
        { new: true },
      )
      .lean<AnalysisDoc>();
  }

  remove(analysisId: string) {
    return this.deleteOwned(this.model, analysisId);
  }

  async removeForConversation(conversationId: string) {
    await this.model.deleteMany(this.scope<AnalysisDoc>({ conversationId }));
  }
}
