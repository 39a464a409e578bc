import type { StepDoc } from '@lib/chains/chain.schema';
import type { State } from './execution-snapshot';

/** The properties an output schema declares: all a step adds to the state (a model may answer more). */
export function declaredFields(outputSchemaJson: string): string[] {
  return Object.keys((JSON.parse(outputSchemaJson) as { properties: object }).properties);
}

/** The chain state's fields a step's output adds: its declared output fields, or its text as `step<stepOrder>`. */
export function outputFields(step: StepDoc, value: unknown): State {
  if (!step.outputSchemaJson) return { [`step${step.stepOrder}`]: value };
  const answer = value as State;
  return Object.fromEntries(
    declaredFields(step.outputSchemaJson)
      .filter((p) => p in answer)
      .map((p) => [p, answer[p]]),
  );
}

/** A fan-out step's fields from its elements' outputs: each output field as an array in element order. */
export function joinedFields(step: StepDoc, values: unknown[]): State {
  const fields: State = {};
  if (step.outputSchemaJson) {
    for (const p of declaredFields(step.outputSchemaJson))
      fields[p] = values.map((v) => (v as State)[p] ?? null);
  } else fields[`step${step.stepOrder}`] = values;
  return fields;
}
