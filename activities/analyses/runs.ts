import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import {
  FAILURES,
  type AnalysisInput,
  type AnalysisModelCall,
  type AnalysisModelReply,
  type AnalysisToolCall,
  type AgentLoopSetup,
  type ChatToolCall,
} from '@contracts';
import {
  analysisPrompt,
  artifactNameOf,
  onlyRepeatsQuestion,
  questionOf,
} from '@lib/analyses/analysis-rules';
import type { AnalysisDoc } from '@lib/analyses/analysis.schema';
import type { AnalysisOutcome } from '@lib/analyses/analyses.repository';
import type { AgentLookup } from '@lib/analyses/ports';
import type { AnalysesStore } from '@lib/analyses/store';
import type { ToolArtifactsService } from '@lib/artifacts/tool-artifacts.service';
import type { ConversationsService } from '@lib/conversations/conversations.service';
import type { CreditsService } from '@lib/credits/credits.service';
import type { Tenants } from '@lib/db/tenants';
import { AppError, InsufficientCreditsError } from '@lib/errors';
import { isReasoningModel } from '@lib/llm';
import type { Logger } from '@lib/logger';
import { classify, toOpenAiMessages } from '../llm-stream';
import { analysisTools, runAnalysisTool, type AnalysisToolDeps } from './tools';

export interface AnalysisActivityDeps extends AnalysisToolDeps {
  repos: Tenants<AnalysesStore>;
  agents: AgentLookup;
  conversations: Pick<ConversationsService, 'find'>;
  llm: OpenAI;
  logger: Logger;
  /** Model calls of analyses are paid with the organization's credits, like chain steps. */
  credits: Pick<CreditsService, 'requireCredits' | 'recordUsage'>;
  artifacts: Pick<ToolArtifactsService, 'create' | 'update'>;
}

/** The run is no longer the analysis's current one (re-run or deleted): it stops and writes nothing. */
const superseded = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.analysisSuperseded);
/** The run cannot succeed as things are: the analysis fails with this message. */
const failed = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.analysisFailed);

export function createAnalysisActivities(deps: AnalysisActivityDeps) {
  /** The analysis while `input` is its current run. */
  async function current(input: AnalysisInput): Promise<AnalysisDoc> {
    const analysis = await deps.repos.tenant(input.organizationId).analyses.get(input.analysisId);
    if (!analysis) throw superseded('the analysis was deleted');
    if (analysis.generation !== input.generation) throw superseded('the analysis was run again');
    return analysis;
  }

  const actorOf = (a: AnalysisDoc) => ({
    organizationId: a.organizationId,
    userId: a.creatorUserId,
    agentId: a.agentId,
  });

  return {
    /** Marks the run running and gives the loop its setup: the agent's model, the question and the tools. */
    async startAnalysis(input: AnalysisInput): Promise<{ setup: AgentLoopSetup; userId: string }> {
      const tenant = deps.repos.tenant(input.organizationId);
      const analysis = await tenant.analyses.markRunning(input.analysisId, input.generation);
      if (!analysis) {
        await current(input);
        throw superseded('the run has already ended');
      }
      const agent = await deps.agents.find(input.organizationId, analysis.agentId);
      if (!agent) throw failed(`the agent ${analysis.agentId} no longer exists`);
      return {
        userId: analysis.creatorUserId,
        setup: {
          model: agent.model,
          temperature: Number(agent.creativityScore ?? '0.4'),
          reasoning: agent.reasoning,
          messages: [
            { role: 'system', content: analysisPrompt(agent.instructions) },
            { role: 'user', content: questionOf(analysis) },
          ],
          tools: await analysisTools(deps, actorOf(analysis)),
        },
      };
    },

    /** One model call, paid with the organization's credits (402-like: the analysis fails). */
    async callAnalysisModel(call: AnalysisModelCall): Promise<AnalysisModelReply> {
      try {
        await deps.credits.requireCredits(call.organizationId);
      } catch (err) {
        if (err instanceof InsufficientCreditsError)
          throw failed("the organization's credits are used up; an operator can grant more");
        throw err;
      }
      const { setup } = call;
      const tools = call.withTools ? setup.tools : [];
      const reasoning = isReasoningModel(setup.model);
      // A model call that is not streamed says nothing for a while: the beat tells Temporal the worker lives.
      const beat = setInterval(() => Context.current().heartbeat(), 3000);
      let completion: OpenAI.Chat.ChatCompletion;
      try {
        completion = await deps.llm.chat.completions.create(
          {
            model: setup.model,
            messages: toOpenAiMessages(call.messages),
            ...(tools.length
              ? {
                  tools: tools.map((t) => ({
                    type: 'function' as const,
                    function: { name: t.name, description: t.description, parameters: t.parameters },
                  })),
                }
              : {}),
            ...(reasoning
              ? setup.reasoning && setup.reasoning !== 'none'
                ? { reasoning_effort: setup.reasoning as 'low' | 'medium' | 'high' }
                : {}
              : { temperature: setup.temperature }),
          },
          { signal: Context.current().cancellationSignal },
        );
      } catch (err) {
        classify(err);
      } finally {
        clearInterval(beat);
      }
      await deps.credits.recordUsage(call.organizationId, {
        purpose: 'analysis',
        model: completion.model || setup.model,
        usage: completion.usage,
        userId: call.userId,
        reference: `${call.analysisId} run ${call.generation}`,
      });
      const message = completion.choices[0]?.message;
      const toolCalls: ChatToolCall[] = (message?.tool_calls ?? []).flatMap((t, i) =>
        t.type === 'function'
          ? [{ id: t.id || `call_${i}`, name: t.function.name, arguments: t.function.arguments }]
          : [],
      );
      return { content: message?.content ?? '', toolCalls };
    },

    async runAnalysisTool(input: AnalysisToolCall): Promise<string> {
      const analysis = await current(input);
      return runAnalysisTool(deps, actorOf(analysis), input.call);
    },

    /**
     * Stores the answer: a Markdown artifact in the conversation (the first run creates it, later runs add a
     * version; ids derive from the run, so a retry writes nothing new), then the result on the analysis.
     */
    async completeAnalysis(input: AnalysisInput & { text: string }): Promise<void> {
      const text = input.text.trim();
      if (!text) throw failed('the agent gave no answer');
      const analysis = await current(input);
      if (onlyRepeatsQuestion(text, analysis)) throw failed('the agent only repeated the question');
      const conversation = await deps.conversations.find(input.organizationId, analysis.conversationId);
      if (!conversation) throw superseded('the conversation was deleted');
      const call = {
        organizationId: input.organizationId,
        agentId: analysis.agentId,
        conversationId: analysis.conversationId,
        // The conversation's creator owns its artifacts (admins and owners read them all).
        userId: conversation.creatorUserId,
        requestId: `analysis-${analysis._id}-${input.generation}`,
        toolCallId: 'result',
      };
      const content = { content: text, contentType: 'text/markdown' };
      const name = artifactNameOf(analysis.title);
      let artifact: { artifactId: string; versionId: string };
      try {
        artifact = analysis.artifactId
          ? await deps.artifacts.update(call, { artifactId: analysis.artifactId, name, ...content })
          : await deps.artifacts.create(call, { name, ...content });
      } catch (err) {
        // The earlier run's artifact was deleted: this run makes a new one.
        if (!(err instanceof AppError && err.status === 404 && analysis.artifactId)) throw err;
        artifact = await deps.artifacts.create(call, { name, ...content });
      }
      const outcome: AnalysisOutcome = {
        status: 'completed',
        result: text,
        artifactId: artifact.artifactId,
        artifactVersionId: artifact.versionId,
      };
      const done = await deps.repos
        .tenant(input.organizationId)
        .analyses.finish(input.analysisId, input.generation, outcome);
      if (!done) throw superseded('the run was superseded before it could store its result');
    },

    /** Records a run that failed or was cancelled (nothing, when the run is no longer current). */
    async endAnalysis(input: AnalysisInput & { outcome: AnalysisOutcome }): Promise<void> {
      await deps.repos
        .tenant(input.organizationId)
        .analyses.finish(input.analysisId, input.generation, input.outcome);
    },
  };
}
