import { executeChild, proxyActivities } from '@temporalio/workflow';
import { childSearchAttributes } from './search-attributes';
import {
  FAILURES,
  WORKFLOWS,
  workflowIds,
  type InboundEmailInput,
  type InboundEmailResult,
  type TurnWorkflow,
} from '@contracts';
import type { EmailActivities } from './activity-types';

// Parsing a message and writing its records: a few seconds, retried quickly for a while.
const intake = proxyActivities<EmailActivities>({
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

// SMTP relays fail transiently (greylisting, 4xx, restarts): retry for about an hour; 5xx is final.
const mail = proxyActivities<EmailActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [FAILURES.permanentMail],
  },
});

/**
 * One inbound mail to one agent (id: workflowIds.inboundEmail, so a redelivery starts nothing): decide whether
 * the sender may write (refused and automatic mail end here, without a reply), store the message in its
 * conversation, put accepted attachments into the agent's knowledge base, run the turn as a child workflow
 * (the ordinary turn, so its events stream to the member's sockets), and mail the reply, threaded.
 */
export async function inboundEmailWorkflow(input: InboundEmailInput): Promise<InboundEmailResult> {
  const accepted = await intake.prepareInboundEmail(input);
  if (accepted.status !== 'accepted') return { status: accepted.status, reason: accepted.reason };
  const { conversationId, requestId, userId } = accepted;
  if (accepted.attachments > 0) {
    try {
      await intake.ingestEmailAttachments({ ...input, userId });
    } catch {
      // The mail is answered even when its attachments could not be stored (their files say why, if created).
    }
  }
  const turn = await executeChild<TurnWorkflow>(WORKFLOWS.turn, {
    workflowId: workflowIds.turn(input.organizationId, conversationId, requestId),
    typedSearchAttributes: childSearchAttributes(),
    args: [
      { organizationId: input.organizationId, conversationId, agentId: input.agentId, requestId, userId },
    ],
  });
  if (!turn.messageId)
    return { status: 'not_sent', reason: 'the conversation was deleted before the reply', conversationId };
  const sent = await mail.sendEmailReply({
    organizationId: input.organizationId,
    agentId: input.agentId,
    messageKey: input.messageKey,
    conversationId,
    requestId,
  });
  return { status: 'replied', conversationId, replyMessageId: sent.messageId };
}
