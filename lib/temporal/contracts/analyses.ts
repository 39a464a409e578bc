import type { AgentLoopSetup, ChatMessage, ChatToolCall, ModelReply } from './conversations';

/** One run (generation) of an analysis: a re-run is the next generation, with its own workflow id. */
export interface AnalysisInput {
  organizationId: string;
  analysisId: string;
  generation: number;
}

export interface AnalysisResult {
  /** `superseded`: the analysis was deleted or re-run before this run could finish; it wrote nothing more */
  status: 'completed' | 'failed' | 'superseded';
}

/** One model call of an analysis run: the run's setup with the messages and tools of this round. */
export interface AnalysisModelCall extends AnalysisInput {
  /** the member who asked: the usage is recorded for them */
  userId: string;
  setup: AgentLoopSetup;
  messages: ChatMessage[];
  /** false on the last round: the model must answer */
  withTools: boolean;
}

export type AnalysisModelReply = ModelReply;

/** One tool call of an analysis run. */
export interface AnalysisToolCall extends AnalysisInput {
  call: ChatToolCall;
}

export type AnalysisWorkflow = (input: AnalysisInput) => Promise<AnalysisResult>;
