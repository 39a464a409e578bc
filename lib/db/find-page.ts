import type { FilterQuery, Model, SortOrder } from 'mongoose';
import type { PageRequest } from '@lib/paging';

/** One page of a filtered, sorted find plus the total count of the filter (for `totalRows`). */
export async function findPage<T>(
  model: Model<T>,
  filter: FilterQuery<T>,
  sort: Record<string, SortOrder>,
  page: PageRequest,
) {
  const [items, total] = await Promise.all([
    model.find(filter).sort(sort).skip(page.offset).limit(page.limit).lean<T[]>(),
    model.countDocuments(filter),
  ]);
  return { items, total };
}
