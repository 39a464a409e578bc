import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';
import { FAILURES, type AnalysisInput, type AnalysisResult, type ChatMessage } from '@contracts';
import { analysisModel, analysisStore, analysisTools } from './analysis-activity-proxies';
import { failureReason } from './agent-loop';

/** Model rounds with tools; the round after them has none, so the model must answer. */
export const ANALYSIS_TOOL_ROUNDS = 8;

function isSuperseded(err: unknown) {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof ApplicationFailure &&
    err.cause.type === FAILURES.analysisSuperseded
  );
}

/**
 * One run of an analysis (id: workflowIds.analysis): the conversation's agent works through the question in a
 * bounded loop of model calls and tool calls (tables, knowledge bases), then the answer is stored with its
 * artifact. A failure is recorded on the analysis; a cancellation (a re-run or DELETE through the API, or an
 * operator) ends the run, recorded as `cancelled` only when the run is still the analysis's current one.
 */
export async function analysisWorkflow(input: AnalysisInput): Promise<AnalysisResult> {
  try {
    const { setup, userId } = await analysisStore.startAnalysis(input);
    const messages: ChatMessage[] = [...setup.messages];
    for (let round = 0; ; round++) {
      const out = await analysisModel.callAnalysisModel({
        ...input,
        userId,
        setup,
        messages,
        withTools: round < ANALYSIS_TOOL_ROUNDS,
      });
      if (!out.toolCalls.length) {
        await analysisStore.completeAnalysis({ ...input, text: out.content });
        return { status: 'completed' };
      }
      messages.push({ role: 'assistant', content: out.content || null, toolCalls: out.toolCalls });
      const results = await Promise.all(
        out.toolCalls.map((call) => analysisTools.runAnalysisTool({ ...input, call })),
      );
      out.toolCalls.forEach((call, i) =>
        messages.push({ role: 'tool', toolCallId: call.id, content: results[i]! }),
      );
    }
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() =>
        analysisStore.endAnalysis({ ...input, outcome: { status: 'cancelled' } }),
      );
      throw err;
    }
    if (isSuperseded(err)) return { status: 'superseded' };
    await analysisStore.endAnalysis({ ...input, outcome: { status: 'failed', error: failureReason(err) } });
    return { status: 'failed' };
  }
}
