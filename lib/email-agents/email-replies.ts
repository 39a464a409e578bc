import type { SendMailOptions } from 'nodemailer';
import type { EmailReplyInput } from '@contracts';
import type { AgentDoc } from '@lib/agents/agent.schema';
import type { Mailer } from '@lib/mail';
import type { Tenants } from '@lib/db/tenants';
import type { EmailMessageDoc } from './email-message.schema';
import { replyMessageId, replySubject } from './mime';
import type { AgentLookup, MailConversations } from './ports';
import type { EmailAgentsStore } from './store';

const list = (value: string | null | undefined) => (value ? value.split(',') : undefined);

/** The reply to an inbound mail: from the agent's address, threaded under it, copied as the agent says. */
export function buildReply(agent: AgentDoc, inbound: EmailMessageDoc, text: string, messageId: string) {
  const references = inbound.references.map((id) => `<${id}>`);
  const options: SendMailOptions = {
    from: { name: agent.name, address: agent.emailAddress! },
    to: inbound.fromAddress!,
    cc: list(agent.emailCcTo),
    bcc: list(agent.emailBccTo),
    replyTo: agent.emailReplyTo ?? undefined,
    subject: replySubject(inbound.subject ?? undefined),
    text,
    messageId: `<${messageId}>`,
    inReplyTo: inbound.messageId ? `<${inbound.messageId}>` : undefined,
    references: references.length ? references.join(' ') : undefined,
    // RFC 3834: an automatic answer, so auto-responders on the other side do not answer it.
    headers: { 'Auto-Submitted': 'auto-replied' },
  };
  return options;
}

/** Why a reply cannot go out; retrying will not change it. */
export class ReplyNotPossible extends Error {}

/**
 * Sends the agent's stored reply to an accepted inbound mail. The reply's Message-ID is fixed per mail and
 * recorded first, so an answer to it continues the conversation, and a resend is the same message.
 */
export async function sendReply(
  deps: {
    repos: Tenants<EmailAgentsStore>;
    agents: AgentLookup;
    conversations: Pick<MailConversations, 'message'>;
    mailer: Pick<Mailer, 'sendMail'>;
  },
  input: EmailReplyInput,
): Promise<{ messageId: string }> {
  const tenant = deps.repos.tenant(input.organizationId);
  const [agent, inbound, reply] = await Promise.all([
    deps.agents.find(input.organizationId, input.agentId),
    tenant.emailMessages.getInbound(input.agentId, input.messageKey),
    deps.conversations.message(input.organizationId, input.conversationId, input.requestId, 'assistant'),
  ]);
  if (!agent?.emailAddress) throw new ReplyNotPossible('the agent no longer has an email address');
  if (!inbound?.fromAddress) throw new ReplyNotPossible('the inbound mail has no sender to answer');
  if (!reply) throw new ReplyNotPossible('the conversation has no reply to send');
  const messageId = replyMessageId(input.messageKey, agent.emailAddress);
  await tenant.emailMessages.recordOutbound(input.agentId, messageId, input.conversationId, input.requestId);
  const text = reply.content.map((p) => p.text).join('');
  await deps.mailer.sendMail(buildReply(agent, inbound, text, messageId));
  await tenant.emailMessages.setInbound(input.agentId, input.messageKey, {
    status: 'replied',
    replyMessageId: messageId,
  });
  return { messageId };
}
