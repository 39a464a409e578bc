import type { SortOrder } from 'mongoose';
import { createOrFind } from '@lib/db/duplicate-key';
import { findPage } from '@lib/db/find-page';
import { TenantRepository } from '@lib/db/tenant-repository';
import { pickView } from '@lib/db/view';
import { derivedId, nextSeq } from '@lib/ids';
import { containsPattern, type PageRequest } from '@lib/paging';
import { conversationModel, type ConversationDoc } from './conversation.schema';
import { messageModel, type MessageDoc } from './message.schema';

export const CONVERSATION_ORDER: Record<string, Record<string, SortOrder>> = {
  last_message_created_at: { lastMessageCreatedAt: -1, createdAt: -1 },
  created_at: { createdAt: -1 },
  updated_at: { updatedAt: -1 },
  title: { title: 1 },
};

/** A turn writes each of its messages once: the message id derives from (conversation, requestId, role). */
export function messageDocId(conversationId: string, requestId: string, role: string): string {
  return derivedId('msg', [conversationId, requestId, role], 24);
}

export function toConversationView(c: ConversationDoc) {
  return {
    conversationId: c._id,
    ...pickView(c, [
      'organizationId',
      'agentId',
      'title',
      'creatorUserId',
      'lastMessageCreatedAt',
      'createdAt',
      'updatedAt',
    ]),
  };
}
export type ConversationView = ReturnType<typeof toConversationView>;

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
export class ConversationsRepository extends TenantRepository {
  private readonly conversations = this.db.model(conversationModel);
  private readonly messageModel = this.db.model(messageModel);

  /**
   * Creates the conversation a request opens, or returns it when that request already did: the id derives
   * from the creator and the requestId, so a retried POST never opens a second conversation.
   */
  async createForRequest(
    requestId: string,
    fields: Pick<ConversationDoc, 'agentId' | 'title' | 'creatorUserId' | 'isBrowserTask'>,
  ): Promise<ConversationDoc> {
    return (await this.openForRequest(requestId, fields)).doc;
  }

  /** createForRequest, telling whether this call created the conversation (false: a repeat found it). */
  openForRequest(
    requestId: string,
    fields: Pick<ConversationDoc, 'agentId' | 'title' | 'creatorUserId' | 'isBrowserTask'>,
  ): Promise<{ doc: ConversationDoc; created: boolean }> {
    const id = derivedId('cnv', [this.organizationId, fields.creatorUserId, requestId], 20);
    // Usually a new request: the insert goes first (one round trip), a repeat finds what the first one wrote.
    return createOrFind(
      () => this.get(id),
      async () =>
        (
          await this.conversations.create({ _id: id, organizationId: this.organizationId, ...fields })
        ).toObject(),
    );
  }

  get(id: string) {
    return this.findOwned(this.conversations, id);
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
    return findPage(this.conversations, filter, sort, query);
  }

  rename(id: string, title: string) {
    return this.updateOwned(this.conversations, id, { $set: { title } });
  }

  async remove(id: string): Promise<boolean> {
    const removed = await this.deleteOwned(this.conversations, id);
    if (removed) await this.messageModel.deleteMany(this.scope<MessageDoc>({ conversationId: id }));
    return removed;
  }

  messages(conversationId: string) {
    return this.messageModel
      .find(this.scope<MessageDoc>({ conversationId }))
      .sort({ seq: 1, _id: 1 })
      .lean<MessageDoc[]>();
  }

  countMessages(conversationId: string): Promise<number> {
    return this.messageModel.countDocuments(this.scope<MessageDoc>({ conversationId }));
  }

  /** The newest `count` messages (written before `beforeSeq` when given), oldest first. */
  /** The newest `count` messages (every one without a count) before `beforeSeq`, oldest first. */
  async lastMessages(conversationId: string, count: number | undefined, beforeSeq?: number) {
    const filter = this.scope<MessageDoc>({ conversationId });
    if (beforeSeq !== undefined) filter.seq = { $lt: beforeSeq };
    const query = this.messageModel.find(filter).sort({ seq: -1, _id: -1 });
    const newest = await (count === undefined ? query : query.limit(count)).lean<MessageDoc[]>();
    return newest.reverse();
  }

  /** The message a turn wrote in this role, or null. */
  message(conversationId: string, requestId: string, role: 'user' | 'assistant') {
    return this.findOwned(this.messageModel, messageDocId(conversationId, requestId, role));
  }

  async hasTurn(conversationId: string, requestId: string): Promise<boolean> {
    return (
      (await this.findOwned(this.messageModel, messageDocId(conversationId, requestId, 'user'))) !== null
    );
  }

  /** The agent's reply of one turn, once it is stored (`complete`, or `error` when the turn failed). */
  reply(conversationId: string, requestId: string) {
    return this.findOwned(this.messageModel, messageDocId(conversationId, requestId, 'assistant'));
  }

  /**
   * Writes a turn's message once: a retried activity or a re-sent request finds the message already there
   * and returns it unchanged.
   */
  async putMessage(
    fields: Pick<MessageDoc, 'conversationId' | 'requestId' | 'role' | 'status'> & { text: string },
    /** false: the caller records the message on its conversation itself (recordLastMessage), for example
     * while it does something else */
    recordOnConversation = true,
  ) {
    const id = messageDocId(fields.conversationId, fields.requestId, fields.role);
    const { doc: message, created } = await createOrFind(
      () => this.findOwned(this.messageModel, id),
      async () => {
        const doc = await this.messageModel.create({
          _id: id,
          organizationId: this.organizationId,
          conversationId: fields.conversationId,
          requestId: fields.requestId,
          role: fields.role,
          status: fields.status,
          seq: nextSeq(),
          content: [{ type: 'text', text: fields.text }],
        });
        const created = doc.toObject();
        if (recordOnConversation) await this.recordLastMessage(fields.conversationId, created.createdAt);
        return created;
      },
    );
    return { message, created };
  }

  /** Marks a message as the conversation's newest unless a newer one is; idempotent. Returns the conversation
   * as updated (null when it is gone). */
  async recordLastMessage(conversationId: string, createdAt: Date): Promise<ConversationDoc | null> {
    // $max: of two messages stored at once, the later one wins whichever write lands last. (Awaited here: a
    // mongoose query runs again on every `then`.)
    return await this.updateOwned(this.conversations, conversationId, {
      $max: { lastMessageCreatedAt: createdAt },
    });
  }
}
