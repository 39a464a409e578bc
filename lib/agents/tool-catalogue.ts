import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { badRequest } from '@lib/errors';

/** One tool an agent can use; `configSchema` (JSON Schema draft-07) describes its attachment configuration. */
export interface ToolDefinition {
  toolCode: string;
  name: string;
  description: string;
  configSchema: Record<string, unknown>;
}

const TABLE_NAME_PATTERN = '^[A-Za-z0-9_]{1,63}$';
const HEADER_NAME_PATTERN = '^[A-Za-z0-9-]{1,100}$';
const TABLE_NAME = {
  type: 'string',
  pattern: TABLE_NAME_PATTERN,
  description: 'Name of a custom table of the organization (checked when the tool runs)',
};
/** A DNS name, optionally with a leading `*.` wildcard that matches any subdomain (not the bare domain). */
const HOST_PATTERN =
  '^(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)*[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$';

export const TOOL_CATALOGUE: readonly ToolDefinition[] = [
  {
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
  },
  {
    toolCode: 'tables_insert',
    name: 'Insert rows into a custom table',
    description: 'Lets the agent insert rows into one custom table; rows are validated against its fields.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['tableName'],
      properties: { tableName: TABLE_NAME },
    },
  },
  {
    toolCode: 'call_agent',
    name: 'Call an attached agent',
    description:
      "Lets the agent hand a question to one of the agents attached to it (the agent's agent-attachments), " +
      'following the instructions of that attachment, and use the answer.',
    configSchema: { type: 'object', additionalProperties: false, properties: {} },
  },
  {
    toolCode: 'http_request',
    name: 'Outbound HTTP request',
    description:
      'Lets the agent call HTTP(S) APIs on the allowed hosts only. A host entry is a DNS name or `*.example.com` ' +
      '(any subdomain). Whatever the host, requests to private, loopback, link-local and other non-public ' +
      'addresses are refused when the request is made (after DNS resolution), so an allowed name that ' +
      'resolves to an internal address is still blocked. The configured headers (for example an API key) ' +
      'are added to every request and are never shown to the model.',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      required: ['allowedHosts'],
      properties: {
        allowedHosts: {
          type: 'array',
          minItems: 1,
          maxItems: 50,
          uniqueItems: true,
          items: { type: 'string', maxLength: 253, pattern: HOST_PATTERN },
        },
        methods: {
          type: 'array',
          minItems: 1,
          uniqueItems: true,
          items: { type: 'string', enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] },
          default: ['GET'],
        },
        headers: {
          type: 'object',
          maxProperties: 20,
          propertyNames: { pattern: HEADER_NAME_PATTERN },
          additionalProperties: { type: 'string', maxLength: 4000 },
        },
        timeoutMs: { type: 'integer', minimum: 100, maximum: 60000, default: 10000 },
      },
    },
  },
  {
    toolCode: 'current_time',
    name: 'Current date and time',
    description: 'Tells the agent the current date and time, in the configured IANA time zone (default UTC).',
    configSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        timeZone: {
          type: 'string',
          format: 'time-zone',
          description: 'An IANA time zone such as Australia/Sydney',
          default: 'UTC',
        },
      },
    },
  },
];

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const ajv = new Ajv({ allErrors: true, strict: true });
ajv.addFormat('time-zone', { type: 'string', validate: isTimeZone });
const VALIDATORS = new Map<string, ValidateFunction>(
  TOOL_CATALOGUE.map((t) => [t.toolCode, ajv.compile(t.configSchema)]),
);

export function findTool(toolCode: string): ToolDefinition | undefined {
  return TOOL_CATALOGUE.find((t) => t.toolCode === toolCode);
}

/** What a value failing each pattern should look like, instead of the bare regex. */
const PATTERN_HINTS: Record<string, string> = {
  [HOST_PATTERN]: 'must be a host name such as api.example.com or *.example.com',
  [TABLE_NAME_PATTERN]: 'must be a table name (letters, digits and underscores, at most 63)',
  [HEADER_NAME_PATTERN]: 'must be a header name (letters, digits and -)',
};

function describe(e: ErrorObject): string | null {
  const where = `configuration${e.instancePath.replace(/\//g, '.')}`;
  // The propertyNames failure itself repeats the pattern error reported for the name.
  if (e.keyword === 'propertyNames') return null;
  if (e.keyword === 'pattern') {
    const hint = PATTERN_HINTS[String(e.params.pattern)] ?? e.message ?? 'is invalid';
    return e.propertyName ? `${where}: name '${e.propertyName}' ${hint}` : `${where} ${hint}`;
  }
  if (e.keyword === 'additionalProperties') {
    return `${where} has an unknown property '${String(e.params.additionalProperty)}'`;
  }
  if (e.keyword === 'format' && e.params.format === 'time-zone') {
    return `${where} must be an IANA time zone such as Australia/Sydney`;
  }
  return `${where} ${e.message ?? 'is invalid'}`;
}

/** Throws 400 with every problem when the tool is unknown or the configuration does not fit its schema. */
export function validateToolConfiguration(toolCode: string, configuration: unknown): void {
  const validate = VALIDATORS.get(toolCode);
  if (!validate) {
    const known = TOOL_CATALOGUE.map((t) => t.toolCode).join(', ');
    throw badRequest(
      `unknown toolCode '${toolCode}'; GET /orgs/{organizationId}/tools lists them (${known})`,
    );
  }
  if (!validate(configuration)) {
    const messages = (validate.errors ?? []).map(describe).filter((m): m is string => m !== null);
    throw badRequest(
      `invalid configuration for ${toolCode}: ${messages.join('; ')}`,
      messages.map((message) => ({ message })),
    );
  }
}
