import { proxyActivities } from '@temporalio/workflow';
import type { createActivities } from '../activities';

// SMTP relays fail transiently (greylisting, 4xx, restarts): retry for about an hour, then give up.
const { sendInvitationEmail } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes: ['PermanentMailError'],
  },
});

export interface InvitationInput {
  organizationId: string;
  organizationName: string;
  userId: string;
  email: string;
  name: string;
  role: string;
  invitedByName: string;
}

/** Sends the invitation email of a newly created user. Id: `invite-<org>-<userId>`. */
export async function sendInvitationWorkflow(input: InvitationInput): Promise<{ messageId: string }> {
  return sendInvitationEmail(input);
}
