import { MODELS } from '@lib/repositories';
import type { TestEnv } from './env';

/**
 * What is really stored, for tests that must look past the API (nothing left behind after a delete, no secret
 * stored in the clear), by collection name. The one place in tests that reaches a model; read-only by
 * convention.
 */
export function stored(env: TestEnv, collection: string) {
  const def = MODELS.find((m) => m.collection === collection);
  if (!def) throw new Error(`no collection ${collection}`);
  return env.deps.db.model(def);
}
