/** Workflow type names: the API starts workflows by these names, the worker registers functions of these names. */
export const WORKFLOWS = {
  invitation: 'sendInvitationWorkflow',
  turn: 'agentTurnWorkflow',
  agentCall: 'agentCallWorkflow',
  ingestFile: 'ingestFileWorkflow',
  purgeKnowledge: 'purgeKnowledgeWorkflow',
  copyKnowledgeBase: 'copyKnowledgeBaseWorkflow',
  inboundEmail: 'inboundEmailWorkflow',
  chainRun: 'chainRunWorkflow',
  chainFanOut: 'chainFanOutWorkflow',
  scheduleFire: 'scheduleFireWorkflow',
  triggerHandler: 'triggerHandlerWorkflow',
  reconcileSchedules: 'reconcileSchedulesWorkflow',
  webhookDelivery: 'webhookDeliveryWorkflow',
  analysis: 'analysisWorkflow',
  browserSession: 'browserSessionWorkflow',
} as const;

/**
 * Failure types of non-retryable ApplicationFailures. Activities throw them, retry policies name them, the
 * workflows and the API read them: one spelling for all.
 */
export const FAILURES = {
  /** a tool call the model made cannot succeed as asked (bad arguments, refused host, tool not attached) */
  toolInput: 'ToolInputError',
  /** the callbackUrl is not an address the service may call */
  callbackRefused: 'CallbackRefused',
  /** the model server rejected the request (4xx other than 408/409/429) */
  llmRequestRejected: 'LlmRequestRejected',
  /** the SMTP relay rejected the message (5xx) */
  permanentMail: 'PermanentMailError',
  /** what a turn or agent call needs (its agent, its conversation) no longer exists */
  turnTargetGone: 'TurnTargetGone',
  /** a file cannot be parsed as it is (unsupported, empty, encrypted, corrupt) */
  fileUnparseable: 'FileUnparseable',
  /** the embedding server refused the input or the model */
  embeddingRejected: 'EmbeddingRejected',
  /** an ingestion run's file was deleted or reindexed meanwhile: the run stops and writes nothing */
  fileSuperseded: 'FileSuperseded',
  /** a chain step cannot succeed as it is (a guard, an answer that never fit its output schema, a bad path) */
  chainStepFailed: 'ChainStepFailed',
  /** a chain run execution was superseded by a re-run, or its run or chain was deleted */
  chainRunSuperseded: 'ChainRunSuperseded',
  /** an analysis run was superseded by a re-run, or its analysis was deleted */
  analysisSuperseded: 'AnalysisSuperseded',
  /** an analysis cannot be done as it is (its conversation or agent is gone, the credits are used up) */
  analysisFailed: 'AnalysisFailed',
  /** a browser session's Chromium is gone (it crashed, or the worker holding it stopped) */
  browserGone: 'BrowserGone',
} as const;
