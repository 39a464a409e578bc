import { z } from 'zod';
import { features } from './features';
import { infrastructure } from './infrastructure';

// Every setting of the service, read from the environment once and validated here. Each variable's
// `.describe()` is its documentation: docs/configuration.md is generated from these sections
// (`node --import tsx stack/config-docs.mjs`), and lint fails when the two differ.

/** The variables in the order and sections docs/configuration.md shows them. */
export const sections = { ...infrastructure, ...features };

/** Defaults docs/configuration.md gives in words: those that depend on the machine. */
export const defaultsInWords: Record<string, string> = {
  LOCAL_LLM_THREADS: 'CPU cores − 1, from 1 to 4',
};

export const variables = z.object({
  ...infrastructure['Service and logging'],
  ...infrastructure['Database, Temporal and workers'],
  ...infrastructure['Deadlines on every dependency'],
  ...infrastructure['Object storage'],
  ...infrastructure['Realtime and mail'],
  ...infrastructure['Identity'],
  ...infrastructure['Observability'],
  ...features['Knowledge bases'],
  ...features['Models and credits'],
  ...features['Admission and turns'],
  ...features['Tables, artifacts and apps'],
  ...features['Chains'],
  ...features['Webhooks'],
  ...features['Budgets of what tenants write'],
  ...features['Browser sessions'],
});
