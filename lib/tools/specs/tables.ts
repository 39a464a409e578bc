import { TABLE_NAME_PATTERN } from '@lib/tables/limits';
import type { ToolSpec } from '../tool-spec';

const TABLE_NAME = {
  type: 'string',
  pattern: TABLE_NAME_PATTERN,
  description: 'Name of a custom table of the organization (checked when the tool runs)',
};

export const tablesQueryTool: ToolSpec<{ tableName: string; maxRows: number }> = {
  toolCode: 'tables_query',
  name: 'Query a custom table',
  description:
    'Lets the agent read rows of one custom table of the organization, with filters and ordering, ' +
    'returning at most maxRows rows per call.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['tableName'],
    properties: {
      tableName: TABLE_NAME,
      maxRows: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    },
  },
  model: {
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
  },
  // The agent acts for its organization: its id stands in for the user.
  run: ({ organizationId, agentId, config }, args, deps) =>
    deps.tables.listRows({ organizationId, userId: agentId }, config.tableName, {
      filters: typeof args.filters === 'string' ? args.filters : undefined,
      orderBy: typeof args.orderBy === 'string' ? args.orderBy : undefined,
      limit: Math.min(Number(args.limit ?? 20), config.maxRows),
      offset: 0,
    }),
};

export const tablesInsertTool: ToolSpec<{ tableName: string }> = {
  toolCode: 'tables_insert',
  name: 'Insert rows into a custom table',
  description: 'Lets the agent insert rows into one custom table; rows are validated against its fields.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['tableName'],
    properties: { tableName: TABLE_NAME },
  },
  model: {
    description: 'Insert rows into a custom table',
    parameters: {
      type: 'object',
      properties: { rows: { type: 'array', items: { type: 'object' } } },
      required: ['rows'],
    },
  },
  run: ({ organizationId, agentId, config }, args, deps) =>
    deps.tables.insertRows(
      { organizationId, userId: agentId },
      config.tableName,
      Array.isArray(args.rows) ? args.rows : [],
    ),
};
