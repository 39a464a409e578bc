import { ApplicationFailure } from '@temporalio/activity';
import type { Mailer } from '@lib/mail';
import type { InvitationInput } from '@workflows/invitation';

export function createMailActivities(deps: { mailer: Mailer; publicBaseUrl: string }) {
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
          throw ApplicationFailure.nonRetryable(
            `SMTP rejected the message: ${(err as Error).message}`,
            'PermanentMailError',
          );
        }
        throw err;
      }
    },
  };
}
