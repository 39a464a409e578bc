import type { InboundEmailInput, InboundEmailIntake } from '@contracts';
import type { AgentAccess } from '@lib/agents/agent-access';
import type { AgentDoc } from '@lib/agents/agent.schema';
import { memberContext } from '@lib/auth/authenticator';
import type { KbFilesService } from '@lib/knowledge-bases/kb-files.service';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import { isSupportedFile } from '@lib/knowledge-bases/parsing/extensions';
import type { Logger } from '@lib/logger';
import type { Tenants } from '@lib/db/tenants';
import type { MemberDoc } from '@lib/users/member.schema';
import { attachmentAllowed, automaticMailReason, stripQuotedReply, threadCandidates, titleOf } from './mime';
import { parseMail, type InboundMail } from './parse-mail';
import type { AgentAddressBook, AgentLookup, MailConversations, SenderMembers } from './ports';
import { unauthenticatedSender } from './sender-authentication';
import type { EmailAgentsStore } from './store';
import { derivedId } from '@lib/ids';

/** What a user message may hold (the limit of a chat message). */
const MAX_MESSAGE_CHARS = 100_000;

export interface InboundEmailDeps {
  repos: Tenants<EmailAgentsStore> & { agentEmails: AgentAddressBook };
  agents: AgentLookup;
  members: SenderMembers;
  conversations: MailConversations;
  access: Pick<AgentAccess, 'canAccessAgent'>;
  objects: Pick<ObjectStore, 'read'>;
  kbFiles: Pick<KbFilesService, 'addFromBytes'>;
  maxBytes: number;
  /** INBOUND_TRUSTED_RELAYS: authserv-ids whose Authentication-Results count (sender-authentication.ts). */
  trustedRelays: readonly string[];
  logger: Logger;
}

/** The requestId of the turn that answers a mail: fixed per mail, so the turn runs once. */
export const emailRequestId = (messageKey: string) => `email-${messageKey.slice(0, 32)}`;

/** The attachments of a mail that go into the agent's knowledge base (in order), and those that do not. */
export function sortAttachments(agent: AgentDoc, mail: InboundMail) {
  const kept: number[] = [];
  const refused: string[] = [];
  mail.attachments.forEach((a, i) => {
    if (!agent.emailAttachmentsToKnowledgeBaseId) return;
    if (!attachmentAllowed(a.fileName, agent.emailAttachmentsFileTypeFilter))
      refused.push(`${a.fileName} (file type not accepted)`);
    else if (!isSupportedFile(a.fileName)) refused.push(`${a.fileName} (not a format knowledge bases read)`);
    else kept.push(i);
  });
  return { kept, refused };
}

/**
 * An inbound mail's way into a conversation (the activities of workflows/inbound-email.ts): who wrote, whether
 * they may, which conversation it belongs to, and its attachments into the knowledge base.
 */
export class InboundEmailService {
  constructor(private readonly deps: InboundEmailDeps) {}

  private async load(input: InboundEmailInput) {
    return parseMail(await this.deps.objects.read(input.objectKey, this.deps.maxBytes));
  }

  /** The member the mail is from, if they may mail this agent; otherwise why not. */
  private async sender(
    organizationId: string,
    agent: AgentDoc,
    address: string | null,
  ): Promise<{ member: MemberDoc } | { refused: string }> {
    const member = address ? await this.deps.members.memberByEmail(organizationId, address) : null;
    if (!member) return { refused: 'the sender is not a member of the organization' };
    // `all`: every member; any other value (or none): members with access to the agent.
    if (agent.emailFilters === 'all') return { member };
    if (await this.deps.access.canAccessAgent(memberContext(member, 'session'), agent.agentId))
      return { member };
    return { refused: 'the sender may not use this agent' };
  }

  /**
   * Decides what becomes of the mail and, when it is accepted, stores it as the user message of its
   * conversation (a new one, or the one its thread belongs to). Idempotent for one run; another run with the
   * same mail (a redelivery) is `duplicate`. Refused and ignored mail gets no reply, so strangers learn nothing
   * and no backscatter goes to forged senders.
   */
  async prepare(input: InboundEmailInput, runId: string): Promise<InboundEmailIntake> {
    const tenant = this.deps.repos.tenant(input.organizationId);
    const agent = await this.deps.agents.find(input.organizationId, input.agentId);
    if (!agent?.emailAddress) return { status: 'ignored', reason: 'the agent no longer has this address' };
    const mail = await this.load(input);
    const { doc, created } = await tenant.emailMessages.claimInbound(input.agentId, input.messageKey, runId, {
      messageId: mail.messageId,
      fromAddress: mail.fromAddress,
      subject: mail.subject,
      references: [...mail.references, ...(mail.messageId ? [mail.messageId] : [])].slice(-50),
    });
    if (!created && doc.runId !== runId)
      return { status: 'duplicate', reason: 'this message was delivered before' };
    const kept = sortAttachments(agent, mail);
    const requestId = emailRequestId(input.messageKey);
    if (doc.status === 'accepted' && doc.conversationId) {
      // A retried attempt of this run: the first one got this far (unless its conversation was deleted since).
      const userId = (await this.deps.conversations.find(input.organizationId, doc.conversationId))
        ?.creatorUserId;
      if (userId)
        return { ...this.accepted(doc.conversationId, requestId, userId), attachments: kept.kept.length };
    }
    const finish = async (status: 'refused' | 'ignored', reason: string) => {
      await tenant.emailMessages.setInbound(input.agentId, input.messageKey, { status, reason });
      this.deps.logger.info(
        {
          organizationId: input.organizationId,
          agentId: input.agentId,
          messageKey: input.messageKey,
          reason,
        },
        `inbound mail ${status}`,
      );
      return { status, reason };
    };
    const automatic = automaticMailReason(input.envelopeFrom, mail.header);
    if (automatic) return finish('ignored', automatic);
    if (mail.fromAddress && (await this.deps.repos.agentEmails.findAgentEmailCrossOrg(mail.fromAddress)))
      return finish('ignored', 'the sender is an agent (agents do not answer agents by mail)');
    // Before membership: a forged From of a member must not act as them (run tools, file attachments).
    const unauthenticated = unauthenticatedSender(mail, input.envelopeFrom, this.deps.trustedRelays);
    if (unauthenticated) return finish('refused', unauthenticated);
    const sender = await this.sender(input.organizationId, agent, mail.fromAddress);
    if ('refused' in sender) return finish('refused', sender.refused);
    const userId = sender.member.userId;

    const threadId = await tenant.emailMessages.conversationOfThread(
      input.agentId,
      threadCandidates(mail.inReplyTo, mail.references),
    );
    const thread = threadId ? await this.deps.conversations.find(input.organizationId, threadId) : null;
    // A thread continues only for the member whose conversation it is; anyone else starts their own.
    const continues = thread?.agentId === input.agentId && thread.creatorUserId === userId;
    const conversation = continues
      ? thread
      : await this.deps.conversations.createForRequest(input.organizationId, requestId, {
          agentId: input.agentId,
          title: titleOf(mail.subject),
          creatorUserId: userId,
          isBrowserTask: false,
        });
    await this.deps.conversations.putMessage(input.organizationId, {
      conversationId: conversation._id,
      requestId,
      role: 'user',
      status: 'complete',
      text: this.messageText(mail, !continues, agent, kept),
    });
    await tenant.emailMessages.setInbound(input.agentId, input.messageKey, {
      status: 'accepted',
      conversationId: conversation._id,
      requestId,
    });
    return { ...this.accepted(conversation._id, requestId, userId), attachments: kept.kept.length };
  }

  private accepted(conversationId: string, requestId: string, userId: string) {
    return { status: 'accepted' as const, conversationId, requestId, userId };
  }

  /** The user message: the subject on a new conversation, the new text of the mail, what became of attachments. */
  private messageText(
    mail: InboundMail,
    first: boolean,
    agent: AgentDoc,
    attachments: ReturnType<typeof sortAttachments>,
  ) {
    const parts = [];
    if (first && mail.subject.trim()) parts.push(`Subject: ${mail.subject.trim()}`);
    parts.push(first ? mail.text : stripQuotedReply(mail.text));
    const names = attachments.kept.map((i) => mail.attachments[i]!.fileName);
    if (names.length)
      parts.push(
        `[Attached files added to knowledge base ${agent.emailAttachmentsToKnowledgeBaseId}: ${names.join(', ')}]`,
      );
    if (attachments.refused.length)
      parts.push(`[Attached files not added: ${attachments.refused.join(', ')}]`);
    // Every part is trimmed text; an empty mail body leaves an empty one.
    const text = parts.filter(Boolean).join('\n\n') || '(empty message)';
    return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 20)}\n[… cut]` : text;
  }

  /**
   * Puts the accepted attachments into the agent's knowledge base through the normal path: a file record, its
   * bytes in the object store, and the file's ingestion workflow (WAITING-UPLOAD → … → READY). File ids derive
   * from the mail, so a retry adds nothing twice. Returns the file ids.
   */
  async ingestAttachments(input: InboundEmailInput, userId: string): Promise<string[]> {
    const agent = await this.deps.agents.find(input.organizationId, input.agentId);
    const knowledgeBaseId = agent?.emailAttachmentsToKnowledgeBaseId;
    if (!agent || !knowledgeBaseId) return [];
    const mail = await this.load(input);
    const fileIds: string[] = [];
    for (const i of sortAttachments(agent, mail).kept) {
      const a = mail.attachments[i]!;
      const fileId = derivedId('kbf', [input.organizationId, input.agentId, input.messageKey, String(i)]);
      const file = await this.deps.kbFiles.addFromBytes(input.organizationId, knowledgeBaseId, {
        fileId,
        fileName: a.fileName,
        contentType: a.contentType,
        bytes: a.content,
        creatorUserId: userId,
      });
      if (file) fileIds.push(file._id);
    }
    return fileIds;
  }
}
