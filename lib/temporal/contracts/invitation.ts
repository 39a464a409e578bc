export interface InvitationInput {
  organizationId: string;
  organizationName: string;
  userId: string;
  email: string;
  name: string;
  role: string;
  invitedByName: string;
}

export type InvitationWorkflow = (input: InvitationInput) => Promise<{ messageId: string }>;
