/** Deterministic, tenant-prefixed workflow ids: re-submitting the same business event is idempotent. */
export const workflowIds = {
  invitation: (organizationId: string, userId: string) => `invite-${organizationId}-${userId}`,
  /** One turn: a requestId answers once per conversation, and another member reusing it reaches only their
   * own conversation's turn. */
  turn: (organizationId: string, conversationId: string, requestId: string) =>
    `turn-${organizationId}-${conversationId}-${requestId}`,
  /** The child workflow an agent asks through one tool call of a turn or of another agent call. */
  agentCall: (parentWorkflowId: string, toolCallId: string) => `agent-call-${parentWorkflowId}-${toolCallId}`,
  /** One ingestion run of one generation of a file (reindex starts the next generation). */
  ingestFile: (organizationId: string, fileId: string, generation: number) =>
    `ingest-${organizationId}-${fileId}-${generation}`,
  purgeFile: (organizationId: string, fileId: string) => `kb-file-delete-${organizationId}-${fileId}`,
  purgeKnowledgeBase: (organizationId: string, knowledgeBaseId: string) =>
    `kb-delete-${organizationId}-${knowledgeBaseId}`,
  copyKnowledgeBase: (organizationId: string, messageId: string) => `kb-copy-${organizationId}-${messageId}`,
  /** One inbound mail for one agent: a redelivered message (same Message-ID) finds its workflow. */
  inboundEmail: (organizationId: string, agentId: string, messageKey: string) =>
    `email-${organizationId}-${agentId}-${messageKey}`,
  /** One execution (generation) of a chain run. */
  chainRun: (organizationId: string, runId: string, generation: number) =>
    `chain-run-${organizationId}-${runId}-${generation}`,
  /** One slice of a fan-out step of a chain run execution. */
  chainFanOut: (parentWorkflowId: string, stepId: string, from: number) =>
    `${parentWorkflowId}-fan-${stepId}-${from}`,
  /** A schedule trigger's Temporal Schedule. */
  schedule: (organizationId: string, triggerId: string) => `schedule-${organizationId}-${triggerId}`,
  /** The fires of a schedule: Temporal appends each fire's scheduled time (`…-2025-01-01T09:00:00Z`). */
  scheduleFire: (organizationId: string, triggerId: string) => `schedule-fire-${organizationId}-${triggerId}`,
  /** A fire asked for now (`cli schedule fire`): its own workflow, named by the time it was asked, to the millisecond. */
  scheduleFireNow: (organizationId: string, triggerId: string, at: Date) =>
    `${workflowIds.scheduleFireNowPrefix(organizationId, triggerId)}${at.toISOString()}`,
  scheduleFireNowPrefix: (organizationId: string, triggerId: string) =>
    `${workflowIds.scheduleFire(organizationId, triggerId)}-now-`,
  /** One handler's execution for one fire or delivery: derives from the fire's or delivery's workflow id, so a
   * retried or repeated fire or delivery never runs a handler twice. */
  triggerHandler: (parentWorkflowId: string, handlerId: string) => `${parentWorkflowId}-handler-${handlerId}`,
  /** The Schedule that runs the schedule reconciler for one task queue. */
  reconcileSchedules: (taskQueue: string) => `reconcile-schedules-${taskQueue}`,
  /** One accepted webhook delivery. */
  webhookDelivery: (organizationId: string, webhookId: string, deliveryId: string) =>
    `webhook-delivery-${organizationId}-${webhookId}-${deliveryId}`,
  /** One run (generation) of an analysis of a conversation (PUT with a changed question starts the next). */
  analysis: (organizationId: string, analysisId: string, generation: number) =>
    `analysis-${organizationId}-${analysisId}-${generation}`,
  /** One browser session: its lifetime, and every action of its browser. */
  browserSession: (organizationId: string, sessionId: string) =>
    `browser-session-${organizationId}-${sessionId}`,
  /** Before workflow ids were scoped by conversation (histories recorded then still use it). */
  agentCallV1: (organizationId: string, requestId: string, toolCallId: string) =>
    `agent-call-${organizationId}-${requestId}-${toolCallId}`,
};
