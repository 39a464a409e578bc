/** One inbound mail for one agent. Id: workflowIds.inboundEmail (one workflow per Message-ID and agent). */
export interface InboundEmailInput {
  organizationId: string;
  agentId: string;
  /** Hex sha256 of the Message-ID (of the whole message when it has none). */
  messageKey: string;
  /** Where the raw message is in the object store. */
  objectKey: string;
  /** The SMTP envelope sender (MAIL FROM); empty for bounces. */
  envelopeFrom: string;
}

/** What the intake decided. Anything but `accepted` ends the workflow without a reply. */
export type InboundEmailIntake =
  | {
      status: 'accepted';
      conversationId: string;
      requestId: string;
      /** the member who wrote, as whom the turn runs */
      userId: string;
      /** attachments to put into the agent's knowledge base */
      attachments: number;
    }
  | { status: 'refused' | 'ignored' | 'duplicate'; reason: string };

export interface InboundEmailResult {
  status: 'replied' | 'refused' | 'ignored' | 'duplicate' | 'not_sent';
  reason?: string;
  conversationId?: string;
  /** the Message-ID of the reply */
  replyMessageId?: string;
}

export interface EmailReplyInput {
  organizationId: string;
  agentId: string;
  messageKey: string;
  conversationId: string;
  requestId: string;
}

export type InboundEmailWorkflow = (input: InboundEmailInput) => Promise<InboundEmailResult>;
