import { ApplicationFailure, Context } from '@temporalio/activity';
import type OpenAI from 'openai';
import {
  FAILURES,
  type AgentCallInput,
  type AgentLoopSetup,
  type ChatMessage,
  type EventTarget,
  type ModelCall,
  type TurnInput,
  type TurnSetup,
} from '@contracts';
import { toMessageView } from '@lib/conversations/conversations.repository';
import type { AgentLookup, ModelToolSource } from '@lib/conversations/ports';
import type { ConversationsStore } from '@lib/conversations/store';
import type { Tenants } from '@lib/db/tenants';
import type { Logger } from '@lib/logger';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { agentSettings, HISTORY_MESSAGES, turnSetupOf } from '@lib/conversations/turn-setup';
import { streamModel } from './llm-stream';

/** A permanent condition: retrying cannot bring the agent or conversation back. */
const gone = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.turnTargetGone);

export interface TurnActivityDeps {
  repos: Tenants<ConversationsStore>;
  agents: AgentLookup;
  modelTools: ModelToolSource;
  llm: OpenAI;
  realtime: Pick<RealtimeEmitter, 'emit' | 'emitOnce' | 'flush'>;
  logger: Logger;
}

export function createTurnActivities(deps: TurnActivityDeps) {
  async function loadAgent(organizationId: string, agentId: string) {
    // The tools are read alongside the agent: one round of reads, not two, before the model is called.
    const [agent, tools] = await Promise.all([
      deps.agents.find(organizationId, agentId),
      deps.modelTools.forAgent(organizationId, agentId),
    ]);
    if (!agent) throw gone(`the agent ${agentId} no longer exists`);
    return { ...agentSettings(agent), tools };
  }

  return {
    /** Agent settings, the conversation so far and the tools the model may call. */
    async loadTurn(input: TurnInput): Promise<TurnSetup> {
      const repo = deps.repos.tenant(input.organizationId).conversations;
      const [conversation, agent, history] = await Promise.all([
        repo.get(input.conversationId),
        loadAgent(input.organizationId, input.agentId),
        repo.lastMessages(input.conversationId, HISTORY_MESSAGES),
      ]);
      if (!conversation) throw gone('the conversation no longer exists');
      const { tools, ...settings } = agent;
      return turnSetupOf({
        agent: settings,
        tools,
        history: history.map((m) => ({ role: m.role, text: m.content.map((p) => p.text).join('') })),
        frontendTools: input.frontendTools,
        target: {
          organizationId: input.organizationId,
          conversationId: input.conversationId,
          userId: conversation.creatorUserId,
        },
      });
    },

    /** Settings and tools of an agent asked by another agent; its only message is the question. */
    async loadAgentCall(input: AgentCallInput): Promise<AgentLoopSetup> {
      const agent = await loadAgent(input.organizationId, input.agentId);
      const messages: ChatMessage[] = [
        { role: 'system', content: agent.instructions },
        { role: 'user', content: input.prompt },
      ];
      return { ...agent, messages };
    },

    /**
     * One streamed model call; deltas go to the chat client as they arrive. A turn calls the model once per round
     * (tool calls in between) and the reply is the last round's text: `round` tells clients to start over, and
     * a retried attempt streams again from the start, so `attempt` tells them to drop the earlier deltas.
     */
    async callModel(input: ModelCall) {
      const { attempt } = Context.current().info;
      const { target, round = 0 } = input;
      let seq = 0;
      const reply = await streamModel(deps.llm, input, (text) => {
        if (target)
          deps.realtime.emit('conversation', target, {
            type: 'delta',
            requestId: input.requestId,
            round,
            attempt,
            seq: seq++,
            text,
          });
      });
      // Every delta reaches Redis before the turn goes on, so none can arrive after the turn's next events.
      if (target) await deps.realtime.flush();
      return reply;
    },

    emitTurnEvent(input: {
      target: EventTarget;
      event: 'conversation' | 'tool-update';
      payload: Record<string, unknown>;
    }): Promise<void> {
      deps.realtime.emit(input.event, input.target, input.payload);
      return Promise.resolve();
    },

    /** Stores the reply once (idempotent per requestId) and delivers it once. A conversation deleted meanwhile
     * gets no message (it would be an orphan); its clients still get the error. */
    async saveReply(input: {
      target: EventTarget;
      requestId: string;
      text: string;
      status: 'complete' | 'error';
    }) {
      const repo = deps.repos.tenant(input.target.organizationId).conversations;
      // A turn's final event goes out once, even when this activity runs again after a worker died between
      // publishing it and Temporal hearing the activity complete.
      const finalKey = `turn-final:${input.requestId}`;
      if (!(await repo.get(input.target.conversationId))) {
        deps.realtime.emitOnce(finalKey, 'conversation', input.target, {
          type: 'error',
          requestId: input.requestId,
          message: null,
          error: input.text,
        });
        return null;
      }
      const { message } = await repo.putMessage({
        conversationId: input.target.conversationId,
        requestId: input.requestId,
        role: 'assistant',
        status: input.status,
        text: input.text,
      });
      const view = toMessageView(message);
      deps.realtime.emitOnce(finalKey, 'conversation', input.target, {
        type: input.status === 'error' ? 'error' : 'message',
        requestId: input.requestId,
        message: view,
      });
      return view;
    },
  };
}
