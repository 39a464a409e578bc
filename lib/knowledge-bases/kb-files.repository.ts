import type { FilterQuery } from 'mongoose';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { containsPattern, type PageRequest } from '@lib/paging';
import { kbFileModel, type FileStatus, type KbFileDoc } from './kb-file.schema';

export type NewKbFile = Pick<
  KbFileDoc,
  'knowledgeBaseId' | 'fileName' | 'key' | 'contentType' | 'status' | 'creatorUserId'
> &
  Partial<
    Pick<
      KbFileDoc,
      'parseStrategyOverride' | 'customInstructions' | 'externalFileUrl' | 'sizeBytes' | 'uploadKey'
    >
  >;

/** Files of one organization's knowledge bases. Deleted ones (deletedAt set) are invisible except to the purge. */
export class KbFilesRepository extends TenantRepository {
  private readonly model = this.db.model(kbFileModel);

  async create(fileId: string, fields: NewKbFile): Promise<KbFileDoc> {
    const doc = await this.model.create({
      ...fields,
      _id: fileId,
      organizationId: this.organizationId,
      fileNameKey: fields.fileName.toLowerCase(),
      generation: 1,
    });
    return doc.toObject();
  }

  /** A live file of this knowledge base. */
  async get(knowledgeBaseId: string, fileId: string): Promise<KbFileDoc | null> {
    const file = await this.findOwned(this.model, fileId);
    return file && !file.deletedAt && file.knowledgeBaseId === knowledgeBaseId ? file : null;
  }

  /** Any file of the organization, deleted or not (ingestion checks it is still wanted). */
  getIncludingDeleted(fileId: string) {
    return this.findOwned(this.model, fileId);
  }

  list(knowledgeBaseId: string, query: { query?: string; status?: FileStatus } & PageRequest) {
    const filter = this.scope<KbFileDoc>({ knowledgeBaseId, deletedAt: null });
    if (query.query) filter.fileNameKey = containsPattern(query.query.toLowerCase());
    if (query.status) filter.status = query.status;
    return findPage(this.model, filter, { createdAt: -1, _id: -1 }, query);
  }

  /** Live READY files of these knowledge bases: id and name only (filePattern matching). */
  readyNames(knowledgeBaseIds: string[]) {
    return this.model
      .find(
        this.scope<KbFileDoc>({
          knowledgeBaseId: { $in: knowledgeBaseIds },
          status: 'READY',
          deletedAt: null,
        }),
        { _id: 1, fileNameKey: 1 },
      )
      .lean<Array<Pick<KbFileDoc, '_id' | 'fileNameKey'>>>();
  }

  getMany(fileIds: string[]) {
    return this.model.find(this.scope<KbFileDoc>({ _id: { $in: fileIds } })).lean<KbFileDoc[]>();
  }

  /** The next page of a knowledge base's file ids after `afterId`, deleted or not (purge and copy walk them). */
  async idsAfter(knowledgeBaseId: string, afterId: string | null, limit: number): Promise<string[]> {
    const filter: FilterQuery<KbFileDoc> = this.scope<KbFileDoc>({ knowledgeBaseId });
    if (afterId) filter._id = { $gt: afterId };
    const docs = await this.model.find(filter, { _id: 1 }).sort({ _id: 1 }).limit(limit).lean();
    return docs.map((d) => d._id);
  }

  /**
   * Changes a file only while it is live and still at `generation`: a run of an older generation, or of a
   * deleted file, changes nothing (null).
   */
  setForGeneration(fileId: string, generation: number, set: Partial<KbFileDoc>) {
    return this.model
      .findOneAndUpdate(
        { _id: fileId, organizationId: this.organizationId, generation, deletedAt: null },
        { $set: set },
        { new: true },
      )
      .lean<KbFileDoc>();
  }

  /** Starts a new generation (reindex): atomically, so two reindexes give two generations. */
  nextGeneration(fileId: string, status: FileStatus) {
    return this.model
      .findOneAndUpdate(
        { _id: fileId, organizationId: this.organizationId, deletedAt: null },
        { $inc: { generation: 1 }, $set: { status, statusMessage: null } },
        { new: true },
      )
      .lean<KbFileDoc>();
  }

  async markDeleted(fileId: string): Promise<boolean> {
    const res = await this.model.updateOne(
      { _id: fileId, organizationId: this.organizationId, deletedAt: null },
      { $set: { deletedAt: new Date() } },
    );
    return res.modifiedCount === 1;
  }

  remove(fileId: string) {
    return this.deleteOwned(this.model, fileId);
  }
}
