import type { ModelTool } from '@contracts';
import { MAX_QUERY_ROWS, MAX_TABLES_LISTED } from '@lib/analyses/analysis-rules';
import { AppError } from '@lib/errors';
import type { KbSearchService } from '@lib/knowledge-bases/kb-search.service';
import {
  hitsForModel,
  KB_SEARCH_TOOL,
  kbSearchModelTool,
  searchArgs,
} from '@lib/knowledge-bases/search-tool';
import type { TablesService } from '@lib/tables/tables.service';

export interface AnalysisToolDeps {
  tables: Pick<TablesService, 'list' | 'listRows'>;
  knowledge: Pick<KbSearchService, 'forAnalysis' | 'searchForAnalysis'>;
}

/** Who an analysis's tools act for: tables are read as the member who asked. */
export interface AnalysisActor {
  organizationId: string;
  userId: string;
  agentId: string;
}

/** A tool result larger than this is cut (it goes into the workflow history and the model's context). */
const MAX_RESULT_CHARS = 30_000;

const LIST_TABLES: ModelTool = {
  name: 'list_tables',
  description: 'List the custom tables of the organization with their descriptions and fields.',
  parameters: { type: 'object', properties: {} },
  executor: 'server',
};

const QUERY_TABLE: ModelTool = {
  name: 'query_table',
  description:
    'Read rows of one custom table. filters: `field:operator:value:join` segments joined by |||; ' +
    'orderBy: `field:asc|desc`.',
  parameters: {
    type: 'object',
    properties: {
      tableName: { type: 'string', description: 'A table name from list_tables' },
      filters: { type: 'string' },
      orderBy: { type: 'string' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_QUERY_ROWS },
      offset: { type: 'integer', minimum: 0 },
    },
    required: ['tableName'],
  },
  executor: 'server',
};

/** The tools of an analysis: the organization's tables, and knowledge-base search when there is any to search. */
export async function analysisTools(deps: AnalysisToolDeps, actor: AnalysisActor): Promise<ModelTool[]> {
  const kbs = await deps.knowledge.forAnalysis(actor.organizationId, actor);
  return [LIST_TABLES, QUERY_TABLE, ...(kbs.length ? [kbSearchModelTool(kbs.map((kb) => kb.title))] : [])];
}

const intArg = (value: unknown, fallback: number, max: number) =>
  Number.isInteger(value) ? Math.min(Math.max(Number(value), 0), max) : fallback;

async function run(
  deps: AnalysisToolDeps,
  actor: AnalysisActor,
  name: string,
  args: Record<string, unknown>,
) {
  if (name === LIST_TABLES.name) {
    const tables = await deps.tables.list(actor, { limit: MAX_TABLES_LISTED, offset: 0 });
    return tables.items.map((t) => ({
      name: t.name,
      description: t.description,
      fields: t.fields.map((f) => ({ name: f.name, type: f.type })),
    }));
  }
  if (name === QUERY_TABLE.name) {
    if (typeof args.tableName !== 'string' || !args.tableName)
      return { error: 'tableName must be the name of a table (see list_tables)' };
    return deps.tables.listRows(actor, args.tableName, {
      filters: typeof args.filters === 'string' ? args.filters : undefined,
      orderBy: typeof args.orderBy === 'string' ? args.orderBy : undefined,
      limit: Math.max(intArg(args.limit, 20, MAX_QUERY_ROWS), 1),
      offset: intArg(args.offset, 0, 1_000_000),
    });
  }
  if (name === KB_SEARCH_TOOL) {
    const search = searchArgs(args);
    if (!search) return { error: `${KB_SEARCH_TOOL} needs a non-empty query` };
    return hitsForModel(
      await deps.knowledge.searchForAnalysis(actor.organizationId, actor, search.query, search.limit),
    );
  }
  return { error: `unknown tool ${name}` };
}

/**
 * Runs one tool call of an analysis and answers the model with the result as JSON text. What the model asked
 * wrongly (bad arguments, an unknown table, a bad filter: the services' 4xx) goes back to it as `{ error }`;
 * anything else fails the activity, which retries.
 */
export async function runAnalysisTool(
  deps: AnalysisToolDeps,
  actor: AnalysisActor,
  call: { name: string; arguments: string },
): Promise<string> {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = call.arguments ? JSON.parse(call.arguments) : {};
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return JSON.stringify({ error: 'tool arguments must be a JSON object' });
    args = parsed as Record<string, unknown>;
  } catch {
    return JSON.stringify({ error: 'tool arguments are not valid JSON' });
  }
  let result: unknown;
  try {
    result = await run(deps, actor, call.name, args);
  } catch (err) {
    if (err instanceof AppError && err.status < 500) result = { error: err.message };
    else throw err;
  }
  const text = JSON.stringify(result);
  return text.length <= MAX_RESULT_CHARS
    ? text
    : JSON.stringify({ truncated: true, partialResult: text.slice(0, MAX_RESULT_CHARS) });
}
