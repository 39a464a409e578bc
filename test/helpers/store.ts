import type { Schema } from 'mongoose';
import type { ModelDef } from '@lib/db/connection';
import type { TestEnv } from './env';

/**
 * What is really stored, for tests that must look past the API (nothing left behind after a delete, no secret
 * stored in the clear). The one place outside repositories that reaches a model; read-only by convention.
 */
export function stored<S extends Schema>(env: TestEnv, def: ModelDef<S>) {
  return env.deps.db.model(def);
}
