import type { ToolArtifactsService } from '@lib/artifacts/tool-artifacts.service';
import type { BrowserSessionsService } from '@lib/browser-sessions/browser-sessions.service';
import type { OutboundClient } from '@lib/http/outbound';
import { TABLE_NAME_PATTERN } from '@lib/tables/limits';
import type { TablesService } from '@lib/tables/tables.service';
import type { TaskPlansService } from '@lib/task-plans/task-plans.service';

/** Who runs a tool call: the organization and the agent that called it, with the attachment's configuration
 * (defaults applied). */
export interface ToolRunContext<C> {
  organizationId: string;
  agentId: string;
  config: C;
  /** The turn's request and this call's id: what makes a retried call of a writing tool write once. */
  requestId: string;
  toolCallId: string;
  /** The conversation of a chat turn (absent when another agent called this one). */
  conversation?: { conversationId: string; userId: string };
  /** The chain run of a chain step, and who started it. */
  chainRun?: { actionChainId: string; runId: string; userId: string };
}

/** What running a tool may use. */
export interface ToolRunDeps {
  tables: TablesService;
  outbound: OutboundClient;
  taskPlans: Pick<TaskPlansService, 'writeFromTool'>;
  artifacts: Pick<ToolArtifactsService, 'create' | 'update'>;
  browserSessions: Pick<BrowserSessionsService, 'forTool' | 'act'>;
}

/** One tool of the registry. */
export interface ToolSpec<C = Record<string, unknown>> {
  toolCode: string;
  name: string;
  /** For people choosing tools (the catalogue). */
  description: string;
  /** JSON Schema (draft-07) of the attachment configuration; its `default`s apply when a call runs. */
  configSchema: Record<string, unknown>;
  /** Configuration properties whose values are secrets (for example request headers): stored and used, never
   * shown to the model. Taken from secret-properties.ts, which redaction reads. */
  secretProperties?: readonly string[];
  /** What the model sees: absent for tools the model does not call by name (call_agent adds `ask_<agent>`). */
  model?: { description: string; parameters: Record<string, unknown> };
  run?: (ctx: ToolRunContext<C>, args: Record<string, unknown>, deps: ToolRunDeps) => Promise<unknown>;
}

export const HEADER_NAME_PATTERN = '^[A-Za-z0-9-]{1,100}$';
/** A DNS name, optionally with a leading `*.` wildcard that matches any subdomain (not the bare domain). */
export const HOST_PATTERN =
  '^(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$';

/** The `allowedHosts` of a tool that reaches the network: 1 to 50 host names, wildcards allowed. */
export const ALLOWED_HOSTS_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  items: { type: 'string', maxLength: 253, pattern: HOST_PATTERN },
};

/** What a value failing each pattern should look like, instead of the bare regex. */
export const PATTERN_HINTS: Record<string, string> = {
  [HOST_PATTERN]: 'must be a host name such as api.example.com or *.example.com',
  [TABLE_NAME_PATTERN]: 'must be a table name (letters, digits and underscores, at most 63)',
  [HEADER_NAME_PATTERN]: 'must be a header name (letters, digits and -)',
};
