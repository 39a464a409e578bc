import type { RequestContext } from '@lib/auth/context';
import { iso } from '@lib/db/view';
import { badRequest, conflict, forbidden, notFound } from '@lib/errors';
import { newId } from '@lib/ids';
import type { Tenants } from '@lib/db/tenants';
import type { OrganizationDoc, PendingChange } from './organization.schema';
import type { OrganizationStore } from './store';

/** Fields whose established value changes only after an operator approves (see docs/identity.md). */
/** Attempts of a settings change that keeps meeting a concurrent one; each lost attempt means another succeeded. */
const MAX_CHANGE_ATTEMPTS = 100;
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

/** The PUT body (shapes checked by openapi.yaml). */
export type OrganizationPatch = Partial<{
  name: string;
  abn: string | null;
  tradingName: string | null;
  email: string | null;
  phone: string | null;
  licence: string | null;
  isRealEstate: boolean;
  legalAddress: Record<string, unknown> | null;
  tradingAddress: Record<string, unknown> | null;
  billingVisibility: 'all' | 'owners';
}>;

function pendingView(c: PendingChange) {
  return {
    changeId: c.changeId,
    field: c.field,
    value: c.value,
    requestedByUserId: c.requestedByUserId,
    requestedAt: iso(c.requestedAt),
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
    legalAddress: (org.legalAddress as Record<string, unknown> | undefined) ?? null,
    tradingAddress: (org.tradingAddress as Record<string, unknown> | undefined) ?? null,
    pendingChanges: org.pendingChanges.map(pendingView),
    hostsPublicContent: org.hostsPublicContent,
    billingVisibility: org.billingVisibility,
    ...(canSeeBilling
      ? {
          subscription: {
            plan: org.subscription?.plan ?? 'free',
            status: org.subscription?.status ?? 'active',
          },
        }
      : {}),
    createdAt: org.createdAt.toISOString(),
    updatedAt: org.updatedAt.toISOString(),
  };
}

/** Address keys become stored field names: `$…` and dotted keys cannot be stored, so keys are plain words. */
const ADDRESS_KEY = /^[A-Za-z0-9_-]{1,64}$/;

function checkAddressKeys(field: string, address: Record<string, unknown> | null | undefined) {
  for (const key of Object.keys(address ?? {})) {
    if (!ADDRESS_KEY.test(key))
      throw badRequest(`${field}: key '${key}' must be 1 to 64 letters, digits, '_' or '-'`);
  }
}

export class OrganizationService {
  constructor(private readonly repos: Tenants<OrganizationStore>) {}

  private async load(organizationId: string): Promise<OrganizationDoc> {
    const org = await this.repos.tenant(organizationId).organization.get();
    if (!org) throw notFound('organization');
    return org;
  }

  async get(ctx: RequestContext) {
    return toSettingsView(await this.load(ctx.organizationId), ctx);
  }

  async update(ctx: RequestContext, patch: OrganizationPatch) {
    checkAddressKeys('legalAddress', patch.legalAddress);
    checkAddressKeys('tradingAddress', patch.tradingAddress);
    if (patch.billingVisibility !== undefined && !ctx.capabilities.has('org.billing')) {
      throw forbidden('only owners can change billingVisibility');
    }
    const updated = await this.change(ctx.organizationId, (org) => this.settingsChange(ctx, org, patch));
    return toSettingsView(updated, ctx);
  }

  /** What a patch changes, given the settings as they are now. */
  private settingsChange(ctx: RequestContext, org: OrganizationDoc, patch: OrganizationPatch) {
    const set: Partial<OrganizationDoc> = {};
    for (const field of DIRECT_FIELDS)
      if (patch[field] !== undefined) Object.assign(set, { [field]: patch[field] });
    if (patch.billingVisibility !== undefined) set.billingVisibility = patch.billingVisibility;

    let pending = org.pendingChanges;
    for (const field of APPROVAL_FIELDS) {
      // A cleared abn is an empty one: a change to it waits for approval like any other.
      const value = patch[field] === null ? '' : patch[field];
      if (value === undefined || value === (org[field] ?? '')) continue;
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
    return set;
  }

  /**
   * Reads the settings, computes a change from them and writes it only if nothing changed in between (two
   * requests queueing changes at once must not drop one); on a conflict it starts again from a fresh read.
   */
  private async change(
    organizationId: string,
    compute: (org: OrganizationDoc) => Partial<OrganizationDoc>,
  ): Promise<OrganizationDoc> {
    const repo = this.repos.tenant(organizationId).organization;
    for (let attempt = 0; attempt < MAX_CHANGE_ATTEMPTS; attempt++) {
      const org = await this.load(organizationId);
      const updated = await repo.updateAt(org, compute(org));
      if (updated) return updated;
    }
    throw conflict('the organization settings kept changing while this change was applied; try again');
  }

  // Operator actions (the CLI), never exposed to tenants.

  /** The queued name/abn changes. */
  async pendingChanges(organizationId: string) {
    return (await this.load(organizationId)).pendingChanges.map(pendingView);
  }

  /** Allows or stops the organization publishing public content. */
  async setHostsPublicContent(organizationId: string, enabled: boolean) {
    const doc = await this.repos.tenant(organizationId).organization.update({ hostsPublicContent: enabled });
    if (!doc) throw notFound('organization');
    return { organizationId, hostsPublicContent: doc.hostsPublicContent };
  }

  /** Approves or rejects a queued change. */
  async decidePendingChange(organizationId: string, changeId: string, approve: boolean) {
    let change: PendingChange | undefined;
    const updated = await this.change(organizationId, (org) => {
      change = org.pendingChanges.find((c) => c.changeId === changeId);
      if (!change) throw notFound('pending change');
      const set: Partial<OrganizationDoc> = {
        pendingChanges: org.pendingChanges.filter((c) => c.changeId !== changeId),
      };
      if (approve) set[change.field] = change.value;
      return set;
    });
    if (!change) throw notFound('pending change');
    return {
      organizationId,
      change: pendingView(change),
      approved: approve,
      [change.field]: updated[change.field],
    };
  }

  // For other features (admission, agents, credits, groups, users), which checked their caller already.

  /** The organization record, or null when there is no such organization. */
  find(organizationId: string): Promise<OrganizationDoc | null> {
    return this.repos.tenant(organizationId).organization.get();
  }

  /** Whether the organization may publish public content, for another feature (false when there is none). */
  async hostsPublicContent(organizationId: string): Promise<boolean> {
    return Boolean((await this.repos.tenant(organizationId).organization.get())?.hostsPublicContent);
  }

  /** An operator's admission bounds (lib/admission). */
  async setAdmissionLimits(organizationId: string, admissionLimits: Record<string, unknown>) {
    await this.repos.tenant(organizationId).organization.update({ admissionLimits });
  }

  defaultGroupId(organizationId: string): Promise<string | null> {
    return this.repos.tenant(organizationId).organization.defaultGroupId();
  }

  setDefaultGroup(organizationId: string, userGroupId: string): Promise<void> {
    return this.repos.tenant(organizationId).organization.setDefaultGroup(userGroupId);
  }

  /** Clears the default only if it is still `userGroupId` (a concurrent request may have moved it). */
  unsetDefaultGroup(organizationId: string, userGroupId: string): Promise<void> {
    return this.repos.tenant(organizationId).organization.unsetDefaultGroup(userGroupId);
  }
}
