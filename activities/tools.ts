import { ApplicationFailure } from '@temporalio/activity';
import { FAILURES, type ToolCallInput } from '@contracts';
import { AppError } from '@lib/errors';
import type { KbSearchService } from '@lib/knowledge-bases/kb-search.service';
import { hitsForModel, KB_SEARCH_TOOL, searchArgs } from '@lib/knowledge-bases/search-tool';
import type { Logger } from '@lib/logger';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import type { Tenants } from '@lib/db/tenants';
import { findTool, resolveToolConfiguration } from '@lib/tools/registry';
import type { ToolsStore } from '@lib/tools/store';
import type { ToolRunDeps } from '@lib/tools/tool-spec';

export interface ToolActivityDeps extends ToolRunDeps {
  repos: Tenants<ToolsStore>;
  realtime: Pick<RealtimeEmitter, 'emit'>;
  logger: Logger;
  knowledge: Pick<KbSearchService, 'searchForAgent'>;
}

const refuse = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.toolInput);

export function createToolActivities(deps: ToolActivityDeps) {
  /** The attachment's configuration with the tool's defaults, or null when the tool is not attached. */
  async function attachedConfig(input: ToolCallInput) {
    const attachment = await deps.repos
      .tenant(input.organizationId)
      .toolAttachments.get(input.agentId, input.call.name);
    if (!attachment) return null;
    const config = resolveToolConfiguration(input.call.name, JSON.parse(attachment.configurationJson));
    if (!config)
      throw refuse(`the configuration of ${input.call.name} is no longer valid; update the attachment`);
    return config;
  }

  /** A registry tool attached to the agent, with its configuration. */
  async function registryRun(input: ToolCallInput, args: Record<string, unknown>) {
    const tool = findTool(input.call.name);
    const config = tool?.run ? await attachedConfig(input) : null;
    if (!tool?.run || !config) throw refuse(`tool ${input.call.name} is not attached to this agent`);
    const ctx = {
      organizationId: input.organizationId,
      agentId: input.agentId,
      config,
      requestId: input.requestId,
      toolCallId: input.call.id,
      conversation: input.target
        ? { conversationId: input.target.conversationId, userId: input.target.userId }
        : undefined,
    };
    return async () => {
      try {
        return await tool.run!(ctx, args, deps);
      } catch (err) {
        // A call the service refuses as asked (4xx) fails the same way on every retry: the model hears it now.
        if (err instanceof AppError && err.status < 500) throw refuse(err.message);
        throw err;
      }
    };
  }

  /** The search over the agent's attached knowledge bases. */
  function searchRun(input: ToolCallInput, args: Record<string, unknown>) {
    const search = searchArgs(args);
    if (!search) throw refuse(`${KB_SEARCH_TOOL} needs a non-empty query`);
    return async () =>
      hitsForModel(
        await deps.knowledge.searchForAgent(input.organizationId, input.agentId, search.query, search.limit),
      );
  }

  return {
    /** Runs one server tool call; the chat client sees it start and end as `tool-update` events. */
    async runTool(input: ToolCallInput): Promise<string> {
      const { call, target } = input;
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
      let args: Record<string, unknown>;
      try {
        args = call.arguments ? (JSON.parse(call.arguments) as Record<string, unknown>) : {};
      } catch {
        throw refuse('tool arguments are not valid JSON');
      }
      const run = call.name === KB_SEARCH_TOOL ? searchRun(input, args) : await registryRun(input, args);
      update('running');
      try {
        const result = await run();
        update('completed');
        return JSON.stringify(result);
      } catch (err) {
        update('failed', { error: (err as Error).message });
        deps.logger.info(
          { organizationId: input.organizationId, tool: call.name, error: (err as Error).message },
          'tool call failed',
        );
        throw err;
      }
    },
  };
}
