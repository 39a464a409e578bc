import type { RequestContext } from '@lib/auth/context';
import { badRequest, forbidden, InsufficientCreditsError, notFound } from '@lib/errors';
import { iso } from '@lib/db/view';
import type { Tenants } from '@lib/db/tenants';
import type { CreditAccountDoc } from './credit-account.schema';
import type { CreditAccountRepository } from './credit-accounts.repository';
import type { CreditsStore } from './store';
import type { UsagePurpose } from './llm-usage.schema';
import type { Metrics } from '@lib/observability/metrics';
import { creditCost, tokenCount, type CreditPricing } from './pricing';
import { InFlight } from '@lib/in-flight';

export interface BillingVisibility {
  /** Null when there is no such organization. */
  find(organizationId: string): Promise<{ billingVisibility: string } | null>;
}

export interface CreditSettings extends CreditPricing {
  /** Credits an organization's account opens with (on its first use). */
  startingBalance: number;
}

/** One model call to bill: `usage` is the SDK's `completion.usage` exactly as the model server sent it. */
export interface ModelCallUsage {
  purpose: UsagePurpose;
  model: string;
  usage: { prompt_tokens?: number; completion_tokens?: number } | null | undefined;
  /** The member the call was made for. */
  userId?: string;
  /** What the call belonged to, shown in the ledger (e.g. `chain-run-<org>-<runId> step 2`). */
  reference?: string;
}

export interface RecordedUsage {
  usageId: string;
  promptTokens: number;
  completionTokens: number;
  cost: number;
  /** The balance after this call's debit. */
  balance: number;
}

const MAX_GRANT = 1_000_000_000;

/**
 * Organization credits. Every feature that calls a model for an organization does, per call:
 * `requireCredits` before (402 when the balance is not positive), `recordUsage` after (records the call and
 * debits its cost). Balances change only by `$inc`, so concurrent calls never lose a debit; a call started
 * while the balance was positive is charged in full even if that takes the balance below zero.
 */
export class CreditsService {
  /** recordUsage calls still running. */
  private readonly recording = new InFlight();

  constructor(
    private readonly repos: Tenants<CreditsStore>,
    private readonly settings: CreditSettings,
    /** Who may see billing information is a setting of the organization (its feature, wired in lib/services.ts). */
    private readonly organizations: BillingVisibility,
    private readonly metrics?: Pick<Metrics, 'llmTokens'>,
  ) {}

  get pricing(): CreditPricing {
    const { perThousandPromptTokens, perThousandCompletionTokens } = this.settings;
    return { perThousandPromptTokens, perThousandCompletionTokens };
  }

  /** The current balance (the starting balance while the account has never been used). */
  async balance(organizationId: string): Promise<number> {
    return (await this.account(organizationId)).balance;
  }

  /** Throws 402 insufficient_credits unless the balance is positive. Call it before every model call. */
  async requireCredits(organizationId: string): Promise<void> {
    const balance = await this.balance(organizationId);
    if (balance <= 0) throw new InsufficientCreditsError(organizationId, balance);
  }

  /** Takes `amount` whole credits (≥ 0), atomically; returns the balance after. */
  async debit(organizationId: string, amount: number): Promise<number> {
    if (!Number.isSafeInteger(amount) || amount < 0)
      throw new Error(`a debit is a whole number of credits ≥ 0, not ${amount}`);
    const after = await this.change(organizationId, (account) => account.debit(amount));
    return after.balance;
  }

  /**
   * Records one model call and debits its cost; returns what it cost and the balance after. A caller may leave it
   * running (a chain step does): `settled()` waits for every one still running.
   */
  recordUsage(organizationId: string, call: ModelCallUsage): Promise<RecordedUsage> {
    const recording = this.record(organizationId, call);
    this.recording.add(recording);
    return recording;
  }

  /** Waits for every recordUsage still running (before the database connection closes). */
  settled(): Promise<void> {
    return this.recording.settled();
  }

  private async record(organizationId: string, call: ModelCallUsage): Promise<RecordedUsage> {
    const promptTokens = tokenCount(call.usage?.prompt_tokens);
    const completionTokens = tokenCount(call.usage?.completion_tokens);
    const cost = creditCost({ promptTokens, completionTokens }, this.settings);
    // Every billed model call passes here: the one place that sees each organization's token usage.
    this.metrics?.llmTokens.inc({ organization_id: organizationId, kind: 'prompt' }, promptTokens);
    this.metrics?.llmTokens.inc({ organization_id: organizationId, kind: 'completion' }, completionTokens);
    // Debit first: a failure between the two writes leaves a charge without its record (visible in `spent`),
    // never a recorded call that was not charged.
    const balance = await this.debit(organizationId, cost);
    const record = await this.repos.tenant(organizationId).llmUsage.create({
      purpose: call.purpose,
      model: call.model,
      promptTokens,
      completionTokens,
      usageReported: call.usage?.prompt_tokens !== undefined || call.usage?.completion_tokens !== undefined,
      cost,
      balanceAfter: balance,
      userId: call.userId ?? null,
      reference: call.reference ?? null,
    });
    return { usageId: record._id, promptTokens, completionTokens, cost, balance };
  }

  /**
   * Operator grant: adds `amount` credits, or takes them with a negative amount (a correction; the balance may
   * go below zero). The organization must exist.
   */
  async grant(organizationId: string, amount: number, note?: string) {
    if (!Number.isSafeInteger(amount) || amount === 0 || Math.abs(amount) > MAX_GRANT)
      throw badRequest(`the amount is a whole number of credits, not 0, at most ${MAX_GRANT} either way`);
    const tenant = this.repos.tenant(organizationId);
    if (!(await this.organizations.find(organizationId))) throw notFound(`organization ${organizationId}`);
    const after = await this.change(organizationId, (account) => account.grant(amount));
    const grant = await tenant.creditGrants.create({
      amount,
      note: note ?? null,
      balanceAfter: after.balance,
    });
    return { organizationId, grantId: grant._id, amount, balance: after.balance };
  }

  /** Balance, totals, prices and the newest `recent` usage records (newest first; a limit of 0 lists none). */
  async summary(organizationId: string, recent = 20) {
    const tenant = this.repos.tenant(organizationId);
    const [account, usage] = await Promise.all([
      this.account(organizationId),
      recent > 0 ? tenant.llmUsage.recent(recent) : [],
    ]);
    return {
      organizationId,
      balance: account.balance,
      granted: account.granted,
      spent: account.spent,
      pricing: this.pricing,
      recentUsage: usage.map((u) => ({
        usageId: u._id,
        purpose: u.purpose,
        model: u.model,
        promptTokens: u.promptTokens,
        completionTokens: u.completionTokens,
        cost: u.cost,
        balanceAfter: u.balanceAfter,
        userId: u.userId ?? null,
        reference: u.reference ?? null,
        createdAt: iso(u.createdAt),
      })),
    };
  }

  /**
   * The summary for a member: credits are billing information, so with `billingVisibility: owners` only
   * members with `org.billing` (owners) see them, like the subscription.
   */
  async summaryFor(ctx: Pick<RequestContext, 'organizationId' | 'capabilities'>, recent: number) {
    const org = await this.organizations.find(ctx.organizationId);
    if (!org) throw notFound('organization');
    if (org.billingVisibility === 'owners' && !ctx.capabilities.has('org.billing'))
      throw forbidden('billing information is visible to owners only (billingVisibility: owners)');
    return this.summary(ctx.organizationId, recent);
  }

  /** The summary with the newest grants and corrections, for operators (`cli credits show`). */
  async operatorSummary(organizationId: string, recent = 20) {
    const tenant = this.repos.tenant(organizationId);
    if (!(await this.organizations.find(organizationId))) throw notFound(`organization ${organizationId}`);
    const [summary, grants] = await Promise.all([
      this.summary(organizationId, recent),
      recent > 0 ? tenant.creditGrants.recent(recent) : [],
    ]);
    return {
      ...summary,
      recentGrants: grants.map((g) => ({
        grantId: g._id,
        amount: g.amount,
        note: g.note ?? null,
        balanceAfter: g.balanceAfter,
        createdAt: iso(g.createdAt),
      })),
    };
  }

  /** The account, or what it will open with. */
  private async account(
    organizationId: string,
  ): Promise<Pick<CreditAccountDoc, 'balance' | 'granted' | 'spent'>> {
    const account = await this.repos.tenant(organizationId).creditAccount.get();
    const start = this.settings.startingBalance;
    return account ?? { balance: start, granted: start, spent: 0 };
  }

  /** Applies one `$inc` to the account, opening the account first when it has never been used. */
  private async change(
    organizationId: string,
    apply: (account: CreditAccountRepository) => Promise<CreditAccountDoc | null>,
  ): Promise<CreditAccountDoc> {
    const account = this.repos.tenant(organizationId).creditAccount;
    const done = await apply(account);
    if (done) return done;
    await this.open(organizationId);
    const after = await apply(account);
    if (!after) throw new Error(`the credit account of ${organizationId} did not open`);
    return after;
  }

  /** Opens the account with the starting balance (once), recording the starting balance as its first grant. */
  private async open(organizationId: string): Promise<void> {
    const tenant = this.repos.tenant(organizationId);
    const start = this.settings.startingBalance;
    if ((await tenant.creditAccount.open(start)) && start !== 0)
      await tenant.creditGrants.create({ amount: start, note: 'starting balance', balanceAfter: start });
  }
}
