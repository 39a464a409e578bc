import { proxyActivities } from '@temporalio/workflow';
import { FAILURES, type InvitationInput } from '@contracts';
import type { UserActivities } from './activity-types';

// SMTP relays fail transiently (greylisting, 4xx, restarts): retry for about an hour, then give up.
const { sendInvitationEmail } = proxyActivities<UserActivities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: [FAILURES.permanentMail],
  },
});

/** Sends the invitation email of a newly created user. Id: workflowIds.invitation. */
export async function sendInvitationWorkflow(input: InvitationInput): Promise<{ messageId: string }> {
  return sendInvitationEmail(input);
}
