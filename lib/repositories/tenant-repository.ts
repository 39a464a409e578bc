import type { FilterQuery } from 'mongoose';
import type { Models } from '@lib/db/models';

/**
 * Base of every repository of one organization's data: it is built with the organization, and `scope()`
 * adds it to every filter, so a query cannot forget the tenant.
 */
export abstract class TenantRepository<D> {
  constructor(
    protected readonly models: Models,
    readonly organizationId: string,
  ) {}

  protected scope<T = D>(filter: FilterQuery<NoInfer<T>> = {}): FilterQuery<T> {
    return { ...filter, organizationId: this.organizationId };
  }
}
