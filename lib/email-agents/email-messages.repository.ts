import { findOrCreate } from '@lib/db/duplicate-key';
import { TenantRepository } from '@lib/db/tenant-repository';
import { emailMessageModel, type EmailMessageDoc } from './email-message.schema';
import { threadKeyOf } from './mime';

export type InboundFields = Pick<EmailMessageDoc, 'messageId' | 'fromAddress' | 'subject' | 'references'>;

/** Agent mail of one organization: threading and the record of each inbound mail. */
export class EmailMessagesRepository extends TenantRepository {
  private readonly model = this.db.model(emailMessageModel);

  private id(agentId: string, key: string) {
    return `${this.organizationId}:${agentId}:${key}`;
  }

  getInbound(agentId: string, messageKey: string) {
    return this.findOwned(this.model, this.id(agentId, messageKey));
  }

  /**
   * Records an inbound mail for the workflow run `runId`, or returns the record already there: `created` false
   * with another runId means the mail was delivered and handled before.
   */
  claimInbound(agentId: string, messageKey: string, runId: string, fields: InboundFields) {
    const _id = this.id(agentId, messageKey);
    return findOrCreate(
      () => this.findOwned(this.model, _id),
      async () =>
        (
          await this.model.create({
            ...fields,
            _id,
            organizationId: this.organizationId,
            agentId,
            direction: 'inbound',
            runId,
            status: 'received',
          })
        ).toObject(),
    );
  }

  setInbound(agentId: string, messageKey: string, set: Partial<EmailMessageDoc>) {
    return this.updateOwned(this.model, this.id(agentId, messageKey), { $set: set });
  }

  /** The conversation of the nearest mail these Message-IDs name (this agent's mail only), or null. */
  async conversationOfThread(agentId: string, messageIds: string[]): Promise<string | null> {
    for (const messageId of messageIds) {
      // The record's id holds the agent's: another agent's mail is never found.
      const doc = await this.findOwned(this.model, this.id(agentId, threadKeyOf(messageId)));
      if (doc?.conversationId) return doc.conversationId;
    }
    return null;
  }

  /** Remembers a reply's Message-ID, so an answer to the reply continues its conversation. */
  async recordOutbound(agentId: string, messageId: string, conversationId: string, requestId: string) {
    await findOrCreate(
      () => this.findOwned(this.model, this.id(agentId, threadKeyOf(messageId))),
      async () =>
        (
          await this.model.create({
            _id: this.id(agentId, threadKeyOf(messageId)),
            organizationId: this.organizationId,
            agentId,
            direction: 'outbound',
            messageId,
            conversationId,
            requestId,
          })
        ).toObject(),
    );
  }

  async removeForAgent(agentId: string) {
    await this.model.deleteMany(this.scope<EmailMessageDoc>({ agentId }));
  }
}
