import { ApplicationFailure, Context } from '@temporalio/activity';
import { FAILURES, type EmailReplyInput, type InboundEmailInput, type InboundEmailIntake } from '@contracts';
import { ReplyNotPossible, sendReply } from '@lib/email-agents/email-replies';
import { InboundEmailService, type InboundEmailDeps } from '@lib/email-agents/inbound-email.service';
import type { Mailer } from '@lib/mail';

export interface EmailActivityDeps extends InboundEmailDeps {
  mailer: Pick<Mailer, 'sendMail'>;
}

/** The activities of workflows/inbound-email.ts. */
export function createEmailActivities(deps: EmailActivityDeps) {
  const inbound = new InboundEmailService(deps);
  return {
    /** Who wrote, whether they may, and the user message in its conversation. */
    prepareInboundEmail(input: InboundEmailInput): Promise<InboundEmailIntake> {
      const { workflowExecution, activityId } = Context.current().info;
      return inbound.prepare(input, workflowExecution?.runId ?? activityId);
    },

    ingestEmailAttachments(input: InboundEmailInput & { userId: string }): Promise<string[]> {
      return inbound.ingestAttachments(input, input.userId);
    },

    /** Sends the agent's reply through the relay. 5xx answers and replies that cannot exist are final. */
    async sendEmailReply(input: EmailReplyInput): Promise<{ messageId: string }> {
      try {
        return await sendReply(deps, input);
      } catch (err) {
        if (err instanceof ReplyNotPossible)
          throw ApplicationFailure.nonRetryable(err.message, FAILURES.permanentMail);
        const code = (err as { responseCode?: number }).responseCode;
        if (code && code >= 500) {
          deps.logger.warn(
            { organizationId: input.organizationId, agentId: input.agentId, code },
            'agent reply rejected by the relay',
          );
          throw ApplicationFailure.nonRetryable(
            `SMTP rejected the reply: ${(err as Error).message}`,
            FAILURES.permanentMail,
          );
        }
        throw err;
      }
    },
  };
}
