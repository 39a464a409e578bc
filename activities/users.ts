import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES, type InvitationInput } from '@contracts';
import type { Logger } from '@lib/logger';
import type { Mailer } from '@lib/mail';

export function createUserActivities(deps: { mailer: Mailer; publicBaseUrl: string; logger: Logger }) {
  return {
    async sendInvitationEmail(input: InvitationInput): Promise<{ messageId: string }> {
      try {
        const info = (await deps.mailer.sendMail({
          to: { name: input.name, address: input.email },
          subject: `You have been invited to ${input.organizationName}`,
          text: [
            `Hello ${input.name},`,
            '',
            `${input.invitedByName} added you to ${input.organizationName} on Agent Workspace as ${input.role}.`,
            `Sign in at ${deps.publicBaseUrl} with this email address (${input.email}).`,
          ].join('\n'),
          headers: { 'X-Organization-Id': input.organizationId, 'X-User-Id': input.userId },
        })) as { messageId: string };
        return { messageId: info.messageId };
      } catch (err) {
        // 5xx SMTP replies (unknown mailbox, policy rejection) will not succeed on retry; 4xx and
        // connection errors will, so they are left to the retry policy.
        const code = (err as { responseCode?: number }).responseCode;
        if (code && code >= 500) {
          deps.logger.warn(
            { organizationId: input.organizationId, userId: input.userId, code },
            'invitation rejected',
          );
          throw ApplicationFailure.nonRetryable(
            `SMTP rejected the message: ${(err as Error).message}`,
            FAILURES.permanentMail,
          );
        }
        throw err;
      }
    },
  };
}
