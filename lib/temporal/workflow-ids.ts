/** Deterministic, tenant-prefixed workflow ids: re-submitting the same business event is idempotent. */
export const workflowIds = {
  invitation: (organizationId: string, userId: string) => `invite-${organizationId}-${userId}`,
  turn: (organizationId: string, requestId: string) => `turn-${organizationId}-${requestId}`,
};
