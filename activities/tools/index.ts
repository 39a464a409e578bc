import { ApplicationFailure } from '@temporalio/activity';
import type { Models } from '@lib/db/models';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import type { EventTarget } from '@lib/realtime/rooms';
import { TablesService } from '@lib/services/tables.service';
import type { ChatToolCall, ToolDefinition } from '@workflows/messages';
import { httpRequest, httpRequestParameters, type HttpRequestConfig } from './http-request';

export interface ToolsDeps {
  models: Models;
  realtime: RealtimeEmitter;
  allowPrivateOutbound: boolean;
  /** the configuration of a tool attached to an agent, or null when it is not attached */
  loadToolConfig: (
    organizationId: string,
    agentId: string,
    toolCode: string,
  ) => Promise<Record<string, unknown> | null>;
}

interface ToolContext {
  organizationId: string;
  agentId: string;
  config: Record<string, unknown>;
}

interface ServerTool {
  description: string;
  parameters: Record<string, unknown>;
  run: (ctx: ToolContext, args: Record<string, unknown>, deps: ToolsDeps) => Promise<unknown>;
}

const tableName = (config: Record<string, unknown>) => String(config.tableName);

/** What the model sees of each server tool, and what running it does. */
export const SERVER_TOOLS: Record<string, ServerTool> = {
  current_time: {
    description: 'The current date and time',
    parameters: { type: 'object', properties: {} },
    run: ({ config }) => {
      const timeZone = typeof config.timeZone === 'string' ? config.timeZone : 'UTC';
      const now = new Date();
      return Promise.resolve({
        now: now.toISOString(),
        timeZone,
        local: now.toLocaleString('en-AU', { timeZone }),
      });
    },
  },
  http_request: {
    description: 'Make an HTTP request to an allowed host',
    parameters: httpRequestParameters,
    run: ({ config }, args, deps) =>
      httpRequest(
        config as unknown as HttpRequestConfig,
        args as Parameters<typeof httpRequest>[1],
        deps.allowPrivateOutbound,
      ),
  },
  tables_query: {
    description:
      'Query rows of a custom table. filters: `field:operator:value:join` segments joined by |||; orderBy: `field:asc|desc`',
    parameters: {
      type: 'object',
      properties: {
        filters: { type: 'string' },
        orderBy: { type: 'string' },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
      },
    },
    run: ({ organizationId, agentId, config }, args, deps) =>
      new TablesService(deps.models).listRows({ organizationId, userId: agentId }, tableName(config), {
        filters: typeof args.filters === 'string' ? args.filters : undefined,
        orderBy: typeof args.orderBy === 'string' ? args.orderBy : undefined,
        limit: Math.min(Number(args.limit ?? 20), Number(config.maxRows ?? 100)),
        offset: 0,
      }),
  },
  tables_insert: {
    description: 'Insert rows into a custom table',
    parameters: {
      type: 'object',
      properties: { rows: { type: 'array', items: { type: 'object' } } },
      required: ['rows'],
    },
    run: ({ organizationId, agentId, config }, args, deps) =>
      new TablesService(deps.models).insertRows(
        { organizationId, userId: agentId },
        tableName(config),
        Array.isArray(args.rows) ? args.rows : [],
      ),
  },
};

export function serverToolDefinition(toolCode: string): ToolDefinition | null {
  const tool = SERVER_TOOLS[toolCode];
  return tool
    ? { name: toolCode, description: tool.description, parameters: tool.parameters, executor: 'server' }
    : null;
}

export function createToolActivities(deps: ToolsDeps) {
  return {
    /** Runs one server tool call; the chat client sees it start and end as `tool-update` events. */
    async runTool(input: {
      organizationId: string;
      agentId: string;
      requestId: string;
      target?: EventTarget;
      call: ChatToolCall;
    }): Promise<string> {
      const { call } = input;
      const { target } = input;
      const update = (status: string, extra: Record<string, unknown> = {}) => {
        if (target)
          deps.realtime.emit('tool-update', target, {
            requestId: input.requestId,
            toolCallId: call.id,
            name: call.name,
            status,
            ...extra,
          });
      };
      const tool = SERVER_TOOLS[call.name];
      const config = tool ? await deps.loadToolConfig(input.organizationId, input.agentId, call.name) : null;
      if (!tool || !config)
        throw ApplicationFailure.nonRetryable(
          `tool ${call.name} is not attached to this agent`,
          'ToolInputError',
        );
      let args: Record<string, unknown>;
      try {
        args = call.arguments ? (JSON.parse(call.arguments) as Record<string, unknown>) : {};
      } catch {
        throw ApplicationFailure.nonRetryable('tool arguments are not valid JSON', 'ToolInputError');
      }
      update('running');
      try {
        const result = await tool.run(
          { organizationId: input.organizationId, agentId: input.agentId, config },
          args,
          deps,
        );
        update('completed');
        return JSON.stringify(result);
      } catch (err) {
        update('failed', { error: (err as Error).message });
        throw err;
      }
    },
  };
}
