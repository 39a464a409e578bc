import { badRequest } from '@lib/errors';
import type { EtlCondition, EtlField } from './etl-rule.schema';
import type { KbFileDoc } from './kb-file.schema';

const VALUELESS = new Set(['IS_EMPTY', 'IS_NOT_EMPTY']);

/** Rejects conditions the schema cannot: a value where none belongs (or none where one does), and merge
 * operators on any but the last condition only. */
export function checkConditions(conditions: EtlCondition[]): void {
  conditions.forEach((c, i) => {
    const where = `conditions[${i}]`;
    const last = i === conditions.length - 1;
    if (VALUELESS.has(c.comparison) && c.value !== undefined)
      throw badRequest(`${where}: ${c.comparison} takes no value`);
    if (!VALUELESS.has(c.comparison) && c.value === undefined)
      throw badRequest(`${where}: ${c.comparison} needs a value`);
    if (!last && !c.mergeOperator)
      throw badRequest(`${where}: mergeOperator (AND or OR) joins it to the next condition and is required`);
    if (last && c.mergeOperator) throw badRequest(`${where}: the last condition takes no mergeOperator`);
  });
}

function fieldValue(file: Pick<KbFileDoc, EtlFileFields>, field: EtlField): string {
  if (field === 'extension') {
    const dot = file.fileName.lastIndexOf('.');
    return dot < 0 ? '' : file.fileName.slice(dot + 1);
  }
  return file[field] ?? '';
}

type EtlFileFields = 'fileName' | 'contentType' | 'externalFileUrl' | 'customInstructions';

function holds(file: Pick<KbFileDoc, EtlFileFields>, c: EtlCondition): boolean {
  const actual = fieldValue(file, c.field).toLowerCase();
  const value = (c.value ?? '').toLowerCase();
  switch (c.comparison) {
    case 'EQUALS':
      return actual === value;
    case 'CONTAINS':
      return actual.includes(value);
    case 'STARTS_WITH':
      return actual.startsWith(value);
    case 'ENDS_WITH':
      return actual.endsWith(value);
    case 'IS_EMPTY':
      return actual.trim() === '';
    case 'IS_NOT_EMPTY':
      return actual.trim() !== '';
  }
}

/** Whether a file meets the conditions: combined left to right, case-insensitively; none means every file. */
export function conditionsHold(file: Pick<KbFileDoc, EtlFileFields>, conditions: EtlCondition[]): boolean {
  if (!conditions.length) return true;
  let result = holds(file, conditions[0]!);
  for (let i = 1; i < conditions.length; i++) {
    const next = holds(file, conditions[i]!);
    result = conditions[i - 1]!.mergeOperator === 'OR' ? result || next : result && next;
  }
  return result;
}
