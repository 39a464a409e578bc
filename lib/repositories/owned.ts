import type { Model, UpdateQuery } from 'mongoose';

// Reads and writes of one document by `_id`, checked against the organization in code. An `_id`-only filter is
// served by the primary key on every Mongo-wire store (FerretDB v1 scans a collection for any other filter),
// and since a document's organizationId never changes, checking it after the read is as safe as filtering on it.

interface Owned {
  organizationId: string;
}

export async function findOwned<T extends Owned>(
  model: Model<T>,
  id: string,
  organizationId: string,
): Promise<T | null> {
  const doc = await model.findById(id).lean<T>();
  return doc && doc.organizationId === organizationId ? doc : null;
}

export async function updateOwned<T extends Owned>(
  model: Model<T>,
  id: string,
  organizationId: string,
  update: UpdateQuery<T>,
): Promise<T | null> {
  if (!(await findOwned(model, id, organizationId))) return null;
  return model.findByIdAndUpdate(id, update, { new: true }).lean<T>();
}

export async function deleteOwned<T extends Owned>(
  model: Model<T>,
  id: string,
  organizationId: string,
): Promise<boolean> {
  if (!(await findOwned(model, id, organizationId))) return false;
  const res = await model.deleteOne({ _id: id });
  return res.deletedCount === 1;
}
