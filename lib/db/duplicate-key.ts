import { ConflictError } from '@lib/errors';

/** The driver's duplicate-key error (a unique index or `_id` was already taken). */
export function isDuplicateKey(err: unknown): boolean {
  return (err as { code?: number } | null)?.code === 11000;
}

/** Runs a write; a duplicate key becomes a ConflictError with `message` (any other error passes through). */
export async function conflictOnDuplicate<T>(write: () => Promise<T>, message: string): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isDuplicateKey(err)) throw new ConflictError(message);
    throw err;
  }
}

/**
 * Creates a record with a deterministic key, or returns the one already there: a retried or concurrent
 * request finds what the first one wrote. `find` runs first (the common case of a repeat), then `create`,
 * then `find` again when the create lost a race.
 */
export async function findOrCreate<T>(
  find: () => Promise<T | null>,
  create: () => Promise<T>,
): Promise<{ doc: T; created: boolean }> {
  const existing = await find();
  if (existing) return { doc: existing, created: false };
  return createOrFind(find, create);
}

/**
 * findOrCreate for keys that are usually new (a fresh id, the first attempt of a derived one): `create` runs
 * first, so a new record costs one round trip instead of two; a taken key falls back to `find`.
 */
export async function createOrFind<T>(
  find: () => Promise<T | null>,
  create: () => Promise<T>,
): Promise<{ doc: T; created: boolean }> {
  try {
    return { doc: await create(), created: true };
  } catch (err) {
    const existing = isDuplicateKey(err) ? await find() : null;
    if (existing) return { doc: existing, created: false };
    throw err;
  }
}
