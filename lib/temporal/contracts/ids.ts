/** Deterministic, tenant-prefixed workflow ids: re-submitting the same business event is idempotent. */
export const workflowIds = {
  invitation: (organizationId: string, userId: string) => `invite-${organizationId}-${userId}`,
  turn: (organizationId: string, requestId: string) => `turn-${organizationId}-${requestId}`,
  /** The child workflow an agent asks through one tool call of a turn (or of another agent call). */
  agentCall: (organizationId: string, requestId: string, toolCallId: string) =>
    `agent-call-${organizationId}-${requestId}-${toolCallId}`,
};
