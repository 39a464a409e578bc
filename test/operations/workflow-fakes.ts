// The fake activities and turn setups of the time-skipping workflow tests (workflows, workflow-failures).
import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  type AgentCallInput,
  type AgentLoopSetup,
  type ModelCall,
  type ModelReply,
  type ModelTool,
  type TurnSetup,
} from '@contracts';

export const ORG = 'org_wf';
export const target = { organizationId: ORG, conversationId: 'cnv_1', userId: 'usr_1' };
const serverTool: ModelTool = { name: 'lookup', description: 'd', parameters: {}, executor: 'server' };
export const setupWith = (tools: ModelTool[]): AgentLoopSetup => ({
  model: 'gpt-test',
  temperature: 0,
  messages: [{ role: 'user', content: 'hi' }],
  tools,
});
export const callTo = (name: string, args = '{}') => ({ id: `call_${randomUUID()}`, name, arguments: args });

/** Recorded calls of the fake activities, and what each answers (tests replace the answers). */
export function fakeActivities(env: TestWorkflowEnvironment) {
  const seen = {
    models: [] as Array<ModelCall & { at: number }>,
    tools: [] as string[],
    events: [] as Array<Record<string, unknown>>,
    replies: [] as Array<{ text: string; status: string }>,
    agentCalls: [] as AgentCallInput[],
    callbacks: 0,
    callbackInputs: [] as unknown[],
    invitations: 0,
    loadTurns: 0,
  };
  const answers = {
    turnSetup: (): TurnSetup => ({ ...setupWith([serverTool]), target }),
    agentSetup: (_input: AgentCallInput): AgentLoopSetup => setupWith([]),
    reply: (_call: ModelCall): ModelReply => ({ content: 'done', toolCalls: [] }),
    tool: (): Promise<string> => Promise.resolve('{"ok":true}'),
    callback: (): Promise<void> => Promise.resolve(),
    invitation: (): Promise<{ messageId: string }> => Promise.resolve({ messageId: '<m1@test>' }),
  };
  const activities = {
    // Called inside the promise, so a setup that throws fails the activity instead of the call.
    loadTurn: () =>
      new Promise<TurnSetup>((resolve) => {
        seen.loadTurns++;
        resolve(answers.turnSetup());
      }),
    loadAgentCall: (input: AgentCallInput) => {
      seen.agentCalls.push(input);
      return Promise.resolve(answers.agentSetup(input));
    },
    callModel: async (call: ModelCall) => {
      seen.models.push({ ...call, at: await env.currentTimeMs() });
      return answers.reply(call);
    },
    runTool: ({ call }: { call: { name: string } }) => {
      seen.tools.push(call.name);
      return answers.tool();
    },
    emitTurnEvent: ({ payload }: { payload: Record<string, unknown> }) => {
      seen.events.push(payload);
      return Promise.resolve();
    },
    saveReply: ({ text, status }: { text: string; status: string }) => {
      seen.replies.push({ text, status });
      return Promise.resolve({ messageId: 'msg_1' });
    },
    postCallback: (input: unknown) => {
      seen.callbacks++;
      seen.callbackInputs.push(input);
      return answers.callback();
    },
    sendInvitationEmail: () => {
      seen.invitations++;
      return answers.invitation();
    },
  };
  return { seen, answers, activities };
}
