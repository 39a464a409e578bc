import type { AgentEmailFields, AgentDoc, Reasoning } from './agent.schema';
import { badRequest } from '@lib/errors';

/** The create/replace body; shapes and single values are already checked by openapi.yaml. */
export interface AgentBody extends Partial<Record<keyof AgentEmailFields, string | null>> {
  name: string;
  description: string;
  instructions: string;
  model: string;
  creativityScore?: string;
  reasoning?: Reasoning;
}

export const DEFAULT_CREATIVITY_SCORE = '0.4';

/** Deliberately simple: one @, no spaces or list separators, a dot in the domain. */
const EMAIL = /^[^@\s,;<>"]+@[^@\s,;<>"]+\.[^@\s,;<>".]+$/;
const EXTENSION = /^\.?([A-Za-z0-9]{1,16})$/;
const MAX_LIST_ITEMS = 50;

function splitList(field: string, value: string): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.length > MAX_LIST_ITEMS) throw badRequest(`${field} may list at most ${MAX_LIST_ITEMS} entries`);
  items.forEach((item, i) => {
    if (item === '') throw badRequest(`${field}: entry ${i + 1} is empty`);
  });
  return items;
}

/** `a@x.com, b@y.com` → `a@x.com,b@y.com`; every entry must be an address. */
export function normaliseAddressList(field: string, value: string): string {
  const items = splitList(field, value);
  for (const item of items) {
    if (!EMAIL.test(item)) throw badRequest(`${field}: '${item}' is not an email address`);
  }
  return items.join(',');
}

/** `.PDF, docx` → `pdf,docx`; every entry must be a file extension (letters and digits, optional dot). */
export function normaliseExtensionList(field: string, value: string): string {
  return splitList(field, value)
    .map((item) => {
      const m = EXTENSION.exec(item);
      if (!m?.[1]) throw badRequest(`${field}: '${item}' is not a file extension such as pdf or .docx`);
      return m[1].toLowerCase();
    })
    .join(',');
}

export function checkCreativityScore(value: string): string {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) {
    throw badRequest(`creativityScore must be a number from 0 to 1, got '${value}'`);
  }
  return value;
}

const emptyToNull = (v: string | null | undefined) => (v === undefined ? undefined : v === '' ? null : v);

/**
 * Turns a validated body into stored fields. Optional fields left out are left out of the result (create
 * fills defaults, replace keeps the stored value); `null` or `""` clears an email field.
 */
export function agentFieldsFromBody(body: AgentBody): Partial<AgentDoc> {
  const out: Partial<AgentDoc> = {
    name: body.name,
    nameSort: body.name.toLowerCase(),
    description: body.description,
    instructions: body.instructions,
    model: body.model,
  };
  if (body.creativityScore !== undefined) out.creativityScore = checkCreativityScore(body.creativityScore);
  if (body.reasoning !== undefined) out.reasoning = body.reasoning;
  const plain = ['emailFilters', 'emailAttachmentsToKnowledgeBaseId'] as const;
  for (const key of plain) {
    const v = emptyToNull(body[key]);
    if (v !== undefined) out[key] = v;
  }
  for (const key of ['emailAddress', 'emailReplyTo'] as const) {
    const v = emptyToNull(body[key]);
    if (v !== undefined && v !== null && !EMAIL.test(v)) {
      throw badRequest(`${key}: '${v}' is not an email address`);
    }
    if (v !== undefined) out[key] = v;
  }
  if (out.emailAddress !== undefined) out.emailAddressKey = out.emailAddress?.toLowerCase() ?? null;
  for (const key of ['emailCcTo', 'emailBccTo'] as const) {
    const v = emptyToNull(body[key]);
    if (v !== undefined) out[key] = v === null ? null : normaliseAddressList(key, v);
  }
  const types = emptyToNull(body.emailAttachmentsFileTypeFilter);
  if (types !== undefined) {
    out.emailAttachmentsFileTypeFilter =
      types === null ? null : normaliseExtensionList('emailAttachmentsFileTypeFilter', types);
  }
  return out;
}
