import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { ModelTool } from '@contracts';
import { badRequest } from '@lib/errors';
import { createArtifactTool, updateArtifactTool } from './specs/artifacts';
import { browseTool } from './specs/browse';
import { callAgentTool } from './specs/call-agent';
import { currentTimeTool } from './specs/current-time';
import { httpRequestTool } from './specs/http-request';
import { tablesInsertTool, tablesQueryTool } from './specs/tables';
import { taskPlanTool } from './specs/task-plan';
import { PATTERN_HINTS, type ToolSpec } from './tool-spec';

/**
 * The one registry of tools an agent can use. Each entry (a ToolSpec in specs/) holds everything about its
 * tool: the configuration schema with its defaults, which configuration values are secret, what the model
 * sees, and what running it does. The API (catalogue, attach validation) and the activities (running a call)
 * both read it here.
 */
export const TOOLS: readonly ToolSpec[] = [
  tablesQueryTool,
  tablesInsertTool,
  callAgentTool,
  httpRequestTool,
  currentTimeTool,
  createArtifactTool,
  updateArtifactTool,
  taskPlanTool,
  browseTool,
] as readonly ToolSpec[];

const BY_CODE = new Map(TOOLS.map((t) => [t.toolCode, t]));

export function findTool(toolCode: string): ToolSpec | undefined {
  return BY_CODE.get(toolCode);
}

/** What GET /orgs/{org}/tools lists. */
export function toolCatalogue() {
  return TOOLS.map(({ toolCode, name, description, configSchema }) => ({
    toolCode,
    name,
    description,
    configSchema,
  }));
}

/** What the model sees of an attached tool, or null for tools it does not call by name (call_agent). */
export function modelToolOf(toolCode: string): ModelTool | null {
  const spec = findTool(toolCode);
  if (!spec?.model) return null;
  return {
    name: toolCode,
    description: spec.model.description,
    parameters: spec.model.parameters,
    executor: 'server',
  };
}

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

// useDefaults: a configuration is completed with its schema's defaults when it is resolved for a run, so the
// defaults a catalogue shows are the ones a run applies.
const ajv = new Ajv({ allErrors: true, strict: true, useDefaults: true });
ajv.addFormat('time-zone', { type: 'string', validate: isTimeZone });
const VALIDATORS = new Map<string, ValidateFunction>(
  TOOLS.map((t) => [t.toolCode, ajv.compile(t.configSchema)]),
);

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

/** The configuration with its defaults applied, or the problems that make it invalid. */
function check(toolCode: string, configuration: unknown) {
  const validate = VALIDATORS.get(toolCode);
  if (!validate) return { known: false as const };
  const resolved = structuredClone(configuration) as Record<string, unknown>;
  if (validate(resolved)) return { known: true as const, resolved, problems: [] };
  const problems = (validate.errors ?? []).map(describe).filter((m): m is string => m !== null);
  return { known: true as const, resolved, problems };
}

/** Throws 400 with every problem when the tool is unknown or the configuration does not fit its schema. The
 * configuration is stored as given; defaults apply when it is resolved for a run. */
export function validateToolConfiguration(toolCode: string, configuration: unknown): void {
  const result = check(toolCode, configuration);
  if (!result.known) {
    const known = TOOLS.map((t) => t.toolCode).join(', ');
    throw badRequest(
      `unknown toolCode '${toolCode}'; GET /orgs/{organizationId}/tools lists them (${known})`,
    );
  }
  if (result.problems.length) {
    throw badRequest(
      `invalid configuration for ${toolCode}: ${result.problems.join('; ')}`,
      result.problems.map((message) => ({ message })),
    );
  }
}

/** A stored configuration completed with the schema's defaults, for a run; null when it no longer fits. */
export function resolveToolConfiguration(toolCode: string, stored: unknown): Record<string, unknown> | null {
  const result = check(toolCode, stored);
  return result.known && !result.problems.length ? result.resolved : null;
}
