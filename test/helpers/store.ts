import { MODELS } from '@lib/repositories';
import type { TestEnv } from './env';

/**
 * What is really stored, for tests that must look past the API (nothing left behind after a delete, no secret
 * stored in the clear), by collection name. With `rawCollection`, the one place in tests that reaches the
 * database; read-only by convention.
 */
export function stored(env: TestEnv, collection: string) {
  const def = MODELS.find((m) => m.collection === collection);
  if (!def) throw new Error(`no collection ${collection}`);
  return env.deps.db.model(def);
}

/**
 * A collection as the driver sees it, for the rare test that must change stored data behind the repositories'
 * back: a write no repository made, so nothing announces it (the credential cache's tests).
 */
export function rawCollection<T extends { _id: string }>(env: TestEnv, collection: string) {
  return env.deps.db.collection<T>(collection);
}
