import type { RequestContext } from '@lib/auth/context';
import type { Models } from '@lib/db/models';
import type { OrganizationDoc, PendingChange } from '@lib/db/organization.schema';
import { forbidden, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import { OrganizationRepository } from '@lib/repositories/organizations.repository';

/** Fields whose established value changes only after an operator approves (see README). */
const APPROVAL_FIELDS = ['name', 'abn'] as const;
const DIRECT_FIELDS = [
  'tradingName',
  'email',
  'phone',
  'licence',
  'isRealEstate',
  'legalAddress',
  'tradingAddress',
] as const;

export type OrganizationPatch = Partial<
  Pick<OrganizationDoc, (typeof DIRECT_FIELDS)[number] | 'name' | 'abn' | 'billingVisibility'>
>;

function pendingView(c: PendingChange) {
  return {
    changeId: c.changeId,
    field: c.field,
    value: c.value,
    requestedByUserId: c.requestedByUserId,
    requestedAt: c.requestedAt.toISOString(),
  };
}

export function toSettingsView(org: OrganizationDoc, ctx: { capabilities: ReadonlySet<string> }) {
  const canSeeBilling = org.billingVisibility !== 'owners' || ctx.capabilities.has('org.billing');
  return {
    organizationId: org._id,
    name: org.name,
    tradingName: org.tradingName ?? null,
    abn: org.abn ?? null,
    email: org.email ?? null,
    phone: org.phone ?? null,
    licence: org.licence ?? null,
    isRealEstate: org.isRealEstate ?? false,
    legalAddress: org.legalAddress ?? null,
    tradingAddress: org.tradingAddress ?? null,
    pendingChanges: org.pendingChanges.map(pendingView),
    hostsPublicContent: org.hostsPublicContent,
    billingVisibility: org.billingVisibility,
    ...(canSeeBilling
      ? { subscription: { plan: org.subscription.plan, status: org.subscription.status } }
      : {}),
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
  };
}

export class OrganizationService {
  constructor(private readonly models: Models) {}

  async get(ctx: RequestContext) {
    const org = await new OrganizationRepository(this.models, ctx.organizationId).get();
    if (!org) throw notFound('organization');
    return toSettingsView(org, ctx);
  }

  async update(ctx: RequestContext, patch: OrganizationPatch) {
    if (patch.billingVisibility !== undefined && !ctx.capabilities.has('org.billing')) {
      throw forbidden('only owners can change billingVisibility');
    }
    const repo = new OrganizationRepository(this.models, ctx.organizationId);
    const org = await repo.get();
    if (!org) throw notFound('organization');

    const set: Partial<OrganizationDoc> = {};
    for (const field of DIRECT_FIELDS)
      if (patch[field] !== undefined) Object.assign(set, { [field]: patch[field] });
    if (patch.billingVisibility !== undefined) set.billingVisibility = patch.billingVisibility;

    let pending = org.pendingChanges;
    for (const field of APPROVAL_FIELDS) {
      const value = patch[field];
      if (value === undefined || value === org[field]) continue;
      if (!org[field]) {
        set[field] = value; // not established yet: nothing to protect
        continue;
      }
      // A newer request for the same field replaces the older pending one.
      pending = pending.filter((c) => c.field !== field);
      pending.push({
        changeId: newId('chg'),
        field,
        value,
        requestedByUserId: ctx.userId,
        requestedAt: new Date(),
      });
    }
    set.pendingChanges = pending;
    const updated = await repo.update(set);
    if (!updated) throw notFound('organization');
    return toSettingsView(updated, ctx);
  }
}

/** Operator actions on queued changes (used by the CLI, never exposed to tenants). */
export async function decidePendingChange(
  models: Models,
  organizationId: string,
  changeId: string,
  approve: boolean,
) {
  const repo = new OrganizationRepository(models, organizationId);
  const org = await repo.get();
  if (!org) throw notFound('organization');
  const change = org.pendingChanges.find((c) => c.changeId === changeId);
  if (!change) throw notFound('pending change');
  const set: Partial<OrganizationDoc> = {
    pendingChanges: org.pendingChanges.filter((c) => c.changeId !== changeId),
  };
  if (approve) set[change.field] = change.value;
  const updated = await repo.update(set);
  if (!updated) throw notFound('organization');
  return {
    organizationId,
    change: pendingView(change),
    approved: approve,
    [change.field]: updated[change.field],
  };
}
