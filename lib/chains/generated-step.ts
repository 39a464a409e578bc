import Ajv, { type ErrorObject } from 'ajv';
import { tenantAjv } from './tenant-ajv';

export const REASONING_LEVELS = ['none', 'low', 'medium', 'high'] as const;

/** A chain step written by the model from a prompt (POST /orgs/{org}/chains/from-prompt). */
export interface GeneratedStep {
  name: string;
  description: string;
  instructions: string;
  reasoning: (typeof REASONING_LEVELS)[number];
  outputSchema: Record<string, unknown>;
  /** Only for the first step: the input of the whole chain. */
  inputSchema?: Record<string, unknown>;
}

const LIMITS = { name: 200, description: 2000, instructions: 20_000, schemaChars: 20_000 };

const stepSchema = (description: string) => ({
  type: 'object',
  description,
});

/**
 * The JSON schema the model answers in (`response_format: json_schema`, not strict: the step's own schemas
 * are free-form objects, which strict mode cannot express). The same schema checks the answer.
 */
export function answerSchema(isFirstStep: boolean) {
  const properties: Record<string, object> = {
    name: {
      type: 'string',
      pattern: '\\S',
      maxLength: LIMITS.name,
      description: 'A short title for the step',
    },
    description: {
      type: 'string',
      maxLength: LIMITS.description,
      description: 'One or two sentences: what the step does, for the people who maintain the chain',
    },
    instructions: {
      type: 'string',
      pattern: '\\S',
      maxLength: LIMITS.instructions,
      description:
        'The instructions the model follows when the step runs (a Handlebars template over the chain state)',
    },
    reasoning: {
      type: 'string',
      enum: REASONING_LEVELS,
      description: 'How much the model should reason when the step runs',
    },
    outputSchema: stepSchema(
      'JSON Schema of what the step adds to the chain state: {"type":"object","properties":{...},"required":[...]}',
    ),
  };
  if (isFirstStep)
    properties.inputSchema = stepSchema(
      'JSON Schema of the input the whole chain takes: {"type":"object","properties":{...},"required":[...]}',
    );
  return {
    type: 'object',
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  };
}

// The answer's shape is checked leniently about extra keys (they are dropped, not refused): only what the step
// needs must be right.
const answerAjv = new Ajv({ allErrors: true, strict: false });
const CHECK_ANSWER = {
  first: answerAjv.compile({ ...answerSchema(true), additionalProperties: true }),
  later: answerAjv.compile({ ...answerSchema(false), additionalProperties: true }),
};

function describe(e: ErrorObject): string {
  const where = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'the answer';
  if (e.keyword === 'pattern') return `${where} must not be blank`;
  if (e.keyword === 'enum')
    return `${where} must be one of ${(e.params.allowedValues as string[]).join(', ')}`;
  return `${where} ${e.message ?? 'is invalid'}`;
}

/** What is wrong with a step's input or output schema: it must be a compiling JSON Schema of an object. */
export function stepSchemaProblems(key: string, schema: Record<string, unknown>): string[] {
  if (JSON.stringify(schema).length > LIMITS.schemaChars)
    return [`${key} is longer than ${LIMITS.schemaChars} characters as JSON`];
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push(`${key} must have "type": "object"`);
  const props = schema.properties;
  if (typeof props !== 'object' || props === null || Array.isArray(props) || !Object.keys(props).length)
    problems.push(`${key} must have "properties": an object naming at least one field`);
  try {
    // A fresh instance per schema: a schema's own `$id` must not collide with an earlier answer's.
    tenantAjv().compile(schema);
  } catch (err) {
    problems.push(`${key} is not a valid JSON Schema: ${(err as Error).message}`);
  }
  return problems;
}

export type AnswerCheck = { ok: true; step: GeneratedStep } | { ok: false; problems: string[] };

/** The step in a model's answer, or every problem that makes the answer unusable. */
export function checkAnswer(content: string | null | undefined, isFirstStep: boolean): AnswerCheck {
  if (!content?.trim()) return { ok: false, problems: ['the answer is empty'] };
  let answer: unknown;
  try {
    answer = JSON.parse(content);
  } catch (err) {
    return { ok: false, problems: [`the answer is not JSON: ${(err as Error).message}`] };
  }
  const validate = isFirstStep ? CHECK_ANSWER.first : CHECK_ANSWER.later;
  if (!validate(answer)) return { ok: false, problems: (validate.errors ?? []).map(describe) };
  const a = answer as unknown as GeneratedStep;
  const problems = stepSchemaProblems('outputSchema', a.outputSchema);
  if (isFirstStep) problems.push(...stepSchemaProblems('inputSchema', a.inputSchema!));
  if (problems.length) return { ok: false, problems };
  const step: GeneratedStep = {
    name: a.name.trim(),
    description: a.description,
    instructions: a.instructions,
    reasoning: a.reasoning,
    outputSchema: a.outputSchema,
  };
  if (isFirstStep) step.inputSchema = a.inputSchema;
  return { ok: true, step };
}
