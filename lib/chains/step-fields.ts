import type { ValidateFunction } from 'ajv';
import { badRequest } from '@lib/errors';
import { jsonNodes } from '@lib/json-depth';
import type { StepFields } from './chains.repository';
import { expressionProblem, pathProblem, templateProblem } from './expressions';
import { tenantAjv } from './tenant-ajv';

/** A step as the API takes it (validated for shape by openapi.yaml). */
export interface StepBody {
  stepOrder: number;
  name?: string;
  description?: string;
  instructions?: string;
  reasoning?: 'none' | 'low' | 'medium' | 'high';
  enabled?: boolean;
  inputSchema?: Record<string, unknown> | null;
  outputSchema?: Record<string, unknown> | null;
  showWholeChainState?: boolean;
  forEachElement?: string | null;
  toolChoice?: string | null;
  runIf?: string | null;
  failBeforeRunningIf?: string | null;
  failAfterRunningIf?: string | null;
}

/** The properties a file chain's input carries (a file of a knowledge base). */
export const FILE_INPUT_PROPERTIES = ['fileId', 'knowledgeBaseId', 'fileName'] as const;

// An uncompilable schema is refused. Each schema gets an Ajv of its own: two schemas may declare the same `$id`.
const validators = new Map<string, ValidateFunction>();

/** The validator of a stored schema, compiled once per distinct schema (a fan-out validates thousands). */
export function validatorFor(schemaJson: string): ValidateFunction {
  let validate = validators.get(schemaJson);
  if (!validate) {
    if (validators.size >= 200) validators.clear();
    validate = tenantAjv().compile(JSON.parse(schemaJson) as object);
    validators.set(schemaJson, validate);
  }
  return validate;
}

function schemaProblem(key: string, schema: Record<string, unknown>): string | null {
  if (schema.type !== 'object') return "must have type 'object'";
  const props = schema.properties;
  if (typeof props !== 'object' || props === null || Array.isArray(props))
    return 'must have properties (an object naming each field)';
  if (key === 'outputSchema' && 'input' in props)
    return "must not have a property named 'input' (the chain's input keeps that name in the state)";
  try {
    tenantAjv().compile(schema);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * 400 when the input and output schemas of the steps of one request hold more than `max` objects and arrays
 * together: each is compiled into code (Ajv) on the API's event loop, a fraction of a millisecond per node, so a
 * megabyte of schemas would hold every request up for seconds.
 */
export function checkSchemaSize(bodies: readonly StepBody[], max: number): void {
  let nodes = 0;
  for (const body of bodies)
    for (const schema of [body.inputSchema, body.outputSchema]) {
      if (schema) nodes += jsonNodes(schema, max - nodes);
      if (nodes > max)
        throw badRequest(
          `the steps' inputSchema and outputSchema hold more than ${max} objects and arrays together ` +
            '(CHAIN_SCHEMA_MAX_NODES); make them smaller',
        );
    }
}

const GUARDS = ['runIf', 'failBeforeRunningIf', 'failAfterRunningIf'] as const;

/** The stored fields of a valid step; 400 naming every problem otherwise. */
export function stepFieldsFromBody(body: StepBody): StepFields {
  const problems: string[] = [];
  const template = templateProblem(body.instructions ?? '');
  if (template) problems.push(`instructions: ${template}`);
  for (const guard of GUARDS) {
    const expression = body[guard];
    const problem = expression ? expressionProblem(expression) : null;
    if (problem) problems.push(`${guard}: ${problem}`);
  }
  const path = body.forEachElement ? pathProblem(body.forEachElement) : null;
  if (path) problems.push(`forEachElement: ${path}`);
  for (const key of ['inputSchema', 'outputSchema'] as const) {
    const schema = body[key];
    const problem = schema ? schemaProblem(key, schema) : null;
    if (problem) problems.push(`${key}: ${problem}`);
  }
  if (problems.length)
    throw badRequest(
      `invalid step: ${problems.join('; ')}`,
      problems.map((message) => ({ message })),
    );
  return {
    stepOrder: body.stepOrder,
    name: body.name ?? '',
    description: body.description ?? '',
    instructions: body.instructions ?? '',
    reasoning: body.reasoning ?? 'none',
    enabled: body.enabled ?? true,
    inputSchemaJson: body.inputSchema ? JSON.stringify(body.inputSchema) : null,
    outputSchemaJson: body.outputSchema ? JSON.stringify(body.outputSchema) : null,
    showWholeChainState: body.showWholeChainState ?? false,
    forEachElement: body.forEachElement || null,
    toolChoice: body.toolChoice || null,
    runIf: body.runIf || null,
    failBeforeRunningIf: body.failBeforeRunningIf || null,
    failAfterRunningIf: body.failAfterRunningIf || null,
  };
}

/** The first step of the steps a chain would have (lowest stepOrder). */
export function firstStep<S extends { stepOrder: number }>(steps: readonly S[]): S | undefined {
  return [...steps].sort((a, b) => a.stepOrder - b.stepOrder)[0];
}

/** 400 unless a file chain's first step takes the file it runs on. */
export function checkFileInput(
  inputType: string,
  steps: ReadonlyArray<Pick<StepFields, 'stepOrder' | 'inputSchemaJson'>>,
) {
  if (inputType !== 'file') return;
  const first = firstStep(steps);
  if (!first) return;
  const schema = first.inputSchemaJson ? (JSON.parse(first.inputSchemaJson) as { properties?: object }) : {};
  const missing = FILE_INPUT_PROPERTIES.filter((p) => !schema.properties || !(p in schema.properties));
  if (missing.length)
    throw badRequest(
      `a file chain's first step (stepOrder ${first.stepOrder}) needs an inputSchema with the properties ` +
        `fileId, knowledgeBaseId and fileName; missing: ${missing.join(', ')}`,
    );
}
