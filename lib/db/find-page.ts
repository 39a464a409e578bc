import type { FilterQuery, Model, SortOrder } from 'mongoose';
import type { PageRequest } from '@lib/paging';
import { driverCollection } from './connection';

/**
 * One page of a filtered, sorted find plus the total count of the filter (for `totalRows`), read with the driver:
 * every list endpoint runs it, and mongoose's query building and casting cost more CPU (and garbage) than the
 * reads themselves. Nothing is lost by skipping them: the filters are built from values already in their stored
 * types (strings, patterns, `$in` lists, null), no schema hides a field, and the pages are read lean anyway.
 */
export async function findPage<T>(
  model: Model<T>,
  filter: FilterQuery<T>,
  sort: Record<string, SortOrder>,
  page: PageRequest,
) {
  const collection = driverCollection(model);
  const query = filter as Parameters<typeof collection.find>[0] & object;
  const [items, total] = await Promise.all([
    collection.find(query).sort(sort).skip(page.offset).limit(page.limit).toArray(),
    collection.countDocuments(query),
  ]);
  return { items: items as T[], total };
}
