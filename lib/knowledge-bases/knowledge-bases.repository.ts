import type { FilterQuery } from 'mongoose';
import { findOrCreate } from '@lib/db/duplicate-key';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { containsPattern, type PageRequest } from '@lib/paging';
import { kbDocId, knowledgeBaseModel, type KnowledgeBaseDoc } from './knowledge-base.schema';

/** `orderBy` names on the wire → stored fields. */
export const KB_ORDER_FIELDS = {
  title: 'titleSort',
  created_at: 'createdAt',
  updated_at: 'updatedAt',
} as const;
export type KbOrderField = keyof typeof KB_ORDER_FIELDS;

/** Which personal knowledge bases a reader sees besides the organization's (absent: every one). */
export interface PersonalScope {
  userId: string;
  /** agents whose personal knowledge bases the reader may read; undefined: every agent */
  agentIds?: string[];
}

export interface KbListQuery extends PageRequest {
  q?: string;
  folder?: string;
  orderBy: KbOrderField;
  descending: boolean;
  includePersonal: boolean;
  personal?: PersonalScope;
}

export type KbFields = Partial<
  Omit<KnowledgeBaseDoc, '_id' | 'organizationId' | 'knowledgeBaseId' | 'createdAt' | 'updatedAt'>
>;

/** Knowledge bases of one organization. Deleted ones (deletedAt set) are invisible except to the purge. */
export class KnowledgeBasesRepository extends TenantRepository {
  private readonly model = this.db.model(knowledgeBaseModel);

  private id(knowledgeBaseId: string) {
    return kbDocId(this.organizationId, knowledgeBaseId);
  }

  /** The filter of what a reader sees: organization knowledge bases, and personal ones in its scope. */
  readableFilter(includePersonal: boolean, personal?: PersonalScope): FilterQuery<KnowledgeBaseDoc> {
    const filter = this.scope<KnowledgeBaseDoc>({ deletedAt: null });
    if (!includePersonal) return { ...filter, type: 'ORGANIZATION' };
    if (!personal) return filter;
    const agentScope = personal.agentIds === undefined ? { $ne: null } : { $in: personal.agentIds };
    return {
      ...filter,
      $or: [
        { type: 'ORGANIZATION' },
        { type: 'PERSONAL', creatorUserId: personal.userId, agentId: null },
        { type: 'PERSONAL', agentId: agentScope },
      ],
    };
  }

  list(query: KbListQuery) {
    const filter = this.readableFilter(query.includePersonal, query.personal);
    if (query.q) filter.title = containsPattern(query.q);
    if (query.folder !== undefined) filter.folder = query.folder;
    const dir = query.descending ? -1 : 1;
    return findPage(
      this.model,
      filter,
      { [KB_ORDER_FIELDS[query.orderBy]]: dir, knowledgeBaseId: dir },
      query,
    );
  }

  /** Every readable knowledge base (global search); an organization has tens to hundreds. */
  listReadable(personal?: PersonalScope) {
    return this.model.find(this.readableFilter(true, personal)).lean<KnowledgeBaseDoc[]>();
  }

  async get(knowledgeBaseId: string): Promise<KnowledgeBaseDoc | null> {
    const kb = await this.findOwned(this.model, this.id(knowledgeBaseId));
    return kb && !kb.deletedAt ? kb : null;
  }

  /** Also a knowledge base whose deletion is under way (the purge workflow). */
  getIncludingDeleted(knowledgeBaseId: string) {
    return this.findOwned(this.model, this.id(knowledgeBaseId));
  }

  async create(knowledgeBaseId: string, fields: KbFields & Pick<KnowledgeBaseDoc, 'title' | 'type'>) {
    const doc = await this.model.create({
      ...fields,
      _id: this.id(knowledgeBaseId),
      organizationId: this.organizationId,
      knowledgeBaseId,
      titleSort: fields.title.toLowerCase(),
    });
    return doc.toObject();
  }

  /** Creates the knowledge base under a deterministic id, or returns the one a concurrent call created. */
  async findOrCreate(knowledgeBaseId: string, create: () => Promise<KnowledgeBaseDoc>) {
    const { doc } = await findOrCreate(() => this.getIncludingDeleted(knowledgeBaseId), create);
    return doc;
  }

  update(knowledgeBaseId: string, set: KbFields) {
    const withSort = set.title === undefined ? set : { ...set, titleSort: set.title.toLowerCase() };
    return this.model
      .findOneAndUpdate(
        { _id: this.id(knowledgeBaseId), organizationId: this.organizationId, deletedAt: null },
        { $set: withSort },
        { new: true },
      )
      .lean<KnowledgeBaseDoc>();
  }

  /** Hides the knowledge base; false when it was already gone. */
  async markDeleted(knowledgeBaseId: string): Promise<boolean> {
    const res = await this.model.updateOne(
      { _id: this.id(knowledgeBaseId), organizationId: this.organizationId, deletedAt: null },
      { $set: { deletedAt: new Date() } },
    );
    return res.modifiedCount === 1;
  }

  remove(knowledgeBaseId: string) {
    return this.deleteOwned(this.model, this.id(knowledgeBaseId));
  }
}
