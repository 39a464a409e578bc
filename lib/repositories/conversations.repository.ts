import { createHash } from 'node:crypto';
import type { SortOrder } from 'mongoose';
import type { ConversationDoc } from '@lib/db/conversation.schema';
import type { MessageDoc } from '@lib/db/message.schema';
import { containsPattern, type PageRequest } from '@lib/paging';
import { findPage } from './find-page';
import { deleteOwned, findOwned, updateOwned } from './owned';
import { TenantRepository } from './tenant-repository';

export const CONVERSATION_ORDER: Record<string, Record<string, SortOrder>> = {
  last_message_created_at: { lastMessageCreatedAt: -1, createdAt: -1 },
  created_at: { createdAt: -1 },
  updated_at: { updatedAt: -1 },
  title: { title: 1 },
};

let lastSeq = 0;
/** Microseconds since the epoch, strictly increasing within this process. */
function nextSeq(): number {
  lastSeq = Math.max(lastSeq + 1, Date.now() * 1000);
  return lastSeq;
}

/** A turn writes each of its messages once: the message id derives from (conversation, requestId, role). */
export function messageDocId(conversationId: string, requestId: string, role: string): string {
  return `msg_${createHash('sha256').update(`${conversationId}\n${requestId}\n${role}`).digest('base64url').slice(0, 24)}`;
}

export interface ConversationView {
  conversationId: string;
  organizationId: string;
  agentId: string;
  title: string;
  creatorUserId: string;
  lastMessageCreatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toConversationView(c: ConversationDoc): ConversationView {
  return {
    conversationId: c._id,
    organizationId: c.organizationId,
    agentId: c.agentId,
    title: c.title,
    creatorUserId: c.creatorUserId,
    lastMessageCreatedAt: c.lastMessageCreatedAt ? c.lastMessageCreatedAt.toISOString() : null,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function toMessageView(m: MessageDoc) {
  return {
    messageId: m._id,
    role: m.role,
    content: m.content.map((p) => ({ type: p.type, text: p.text })),
    requestId: m.requestId,
    status: m.status,
    createdAt: m.createdAt.toISOString(),
  };
}
export type MessageView = ReturnType<typeof toMessageView>;

export interface ConversationListQuery extends PageRequest {
  creatorUserId?: string;
  agentIds?: string[];
  agentId?: string;
  q?: string;
  orderBy: keyof typeof CONVERSATION_ORDER;
}

/** Conversations and their messages in one organization; every query is scoped to it. */
export class ConversationsRepository extends TenantRepository<ConversationDoc> {
  /**
   * Creates the conversation a request opens, or returns it when that request already did: the id derives
   * from the creator and the requestId, so a retried POST never opens a second conversation.
   */
  async createForRequest(
    requestId: string,
    fields: Pick<ConversationDoc, 'agentId' | 'title' | 'creatorUserId' | 'isBrowserTask'>,
  ): Promise<ConversationDoc> {
    const key = `${this.organizationId}\n${fields.creatorUserId}\n${requestId}`;
    const id = `cnv_${createHash('sha256').update(key).digest('base64url').slice(0, 20)}`;
    const existing = await this.get(id);
    if (existing) return existing;
    try {
      const doc = await this.models.Conversation.create({
        _id: id,
        organizationId: this.organizationId,
        ...fields,
      });
      return doc.toObject();
    } catch (err) {
      const again = (err as { code?: number }).code === 11000 ? await this.get(id) : null;
      if (again) return again;
      throw err;
    }
  }

  get(id: string) {
    return findOwned(this.models.Conversation, id, this.organizationId);
  }

  async list(query: ConversationListQuery) {
    const filter = this.scope<ConversationDoc>();
    if (query.creatorUserId) filter.creatorUserId = query.creatorUserId;
    if (query.agentId && query.agentIds && !query.agentIds.includes(query.agentId))
      filter.agentId = { $in: [] };
    else if (query.agentId) filter.agentId = query.agentId;
    else if (query.agentIds) filter.agentId = { $in: query.agentIds };
    if (query.q) filter.title = containsPattern(query.q);
    const sort = { ...CONVERSATION_ORDER[query.orderBy], _id: 1 as SortOrder };
    return findPage(this.models.Conversation, filter, sort, query);
  }

  rename(id: string, title: string) {
    return updateOwned(this.models.Conversation, id, this.organizationId, { $set: { title } });
  }

  async remove(id: string): Promise<boolean> {
    const removed = await deleteOwned(this.models.Conversation, id, this.organizationId);
    if (removed) await this.models.Message.deleteMany(this.scope<MessageDoc>({ conversationId: id }));
    return removed;
  }

  messages(conversationId: string) {
    return this.models.Message.find(this.scope<MessageDoc>({ conversationId }))
      .sort({ seq: 1, _id: 1 })
      .lean();
  }

  /** The newest `count` messages, oldest first. */
  async lastMessages(conversationId: string, count: number) {
    const newest = await this.models.Message.find(this.scope<MessageDoc>({ conversationId }))
      .sort({ seq: -1, _id: -1 })
      .limit(count)
      .lean();
    return newest.reverse();
  }

  async hasTurn(conversationId: string, requestId: string): Promise<boolean> {
    return (
      (await findOwned(
        this.models.Message,
        messageDocId(conversationId, requestId, 'user'),
        this.organizationId,
      )) !== null
    );
  }

  /**
   * Writes a turn's message once: a retried activity or a re-sent request finds the message already there
   * and returns it unchanged.
   */
  async putMessage(
    fields: Pick<MessageDoc, 'conversationId' | 'requestId' | 'role' | 'status'> & { text: string },
  ) {
    const id = messageDocId(fields.conversationId, fields.requestId, fields.role);
    const existing = await findOwned(this.models.Message, id, this.organizationId);
    if (existing) return { message: existing, created: false };
    try {
      const doc = await this.models.Message.create({
        _id: id,
        organizationId: this.organizationId,
        conversationId: fields.conversationId,
        requestId: fields.requestId,
        role: fields.role,
        status: fields.status,
        seq: nextSeq(),
        content: [{ type: 'text', text: fields.text }],
      });
      const message = doc.toObject();
      await updateOwned(this.models.Conversation, fields.conversationId, this.organizationId, {
        $set: { lastMessageCreatedAt: message.createdAt },
      });
      return { message, created: true };
    } catch (err) {
      const again =
        (err as { code?: number }).code === 11000
          ? await findOwned(this.models.Message, id, this.organizationId)
          : null;
      if (again) return { message: again, created: false };
      throw err;
    }
  }
}
