import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES } from '@contracts';
import {
  AGENT_STEP_STATUSES,
  MAX_DESCRIPTION,
  MAX_STEPS,
  PLAN_TYPES,
  PlanInputError,
} from '@lib/task-plans/task-plan-rules';
import type { ToolSpec } from '../tool-spec';

const refuse = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.toolInput);

/**
 * The planning tool: the agent writes down the steps of a longer task and reports its progress; the plan is
 * stored and pushed to the conversation's sockets as `task-plan` events (lib/task-plans).
 */
export const taskPlanTool: ToolSpec<Record<string, unknown>> = {
  toolCode: 'task_plan',
  name: 'Task plan',
  description:
    'Lets the agent plan a task in steps and report progress; the plan is shown to the user live and can be ' +
    'cancelled (the agent stops after its current step).',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  model: {
    description:
      'Create or update the plan for a task of several steps. Call it without planId to create a plan (every ' +
      'step needs a description), then with the returned planId whenever a step starts or ends (only the ' +
      'changed steps are needed). The plan completes when every step is completed or skipped; set status ' +
      '"failed" to give it up. If the result says the plan was cancelled, stop working on it.',
    parameters: {
      type: 'object',
      properties: {
        planId: { type: 'string', description: 'The plan to update; omit to create a new plan' },
        type: {
          type: 'string',
          enum: [...PLAN_TYPES],
          description: 'browser for a task done in a web browser, otherwise general (only on create)',
        },
        steps: {
          type: 'array',
          maxItems: MAX_STEPS,
          items: {
            type: 'object',
            properties: {
              stepId: { type: 'string', description: 'A short id of your choice, such as "1" or "fetch"' },
              description: { type: 'string', maxLength: MAX_DESCRIPTION },
              status: { type: 'string', enum: [...AGENT_STEP_STATUSES] },
            },
            required: ['stepId', 'status'],
          },
        },
        status: { type: 'string', enum: ['failed'], description: 'Only to give the plan up' },
      },
      required: ['steps'],
    },
  },
  run: async (ctx, args, deps) => {
    if (!ctx.conversation) throw refuse('task plans belong to a conversation; this call has none');
    try {
      return await deps.taskPlans.writeFromTool(
        {
          organizationId: ctx.organizationId,
          agentId: ctx.agentId,
          conversationId: ctx.conversation.conversationId,
          requestId: ctx.requestId,
        },
        args,
      );
    } catch (err) {
      if (err instanceof PlanInputError) throw refuse(err.message);
      throw err;
    }
  },
};
