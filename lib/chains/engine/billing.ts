import type { ChainRunInput, ChainStepInput } from '@contracts';
import type { CreditsService } from '@lib/credits/credits.service';
import { InsufficientCreditsError } from '@lib/errors';
import { InFlight } from '@lib/in-flight';
import type { Logger } from '@lib/logger';
import { executionKey } from './execution-cache';
import type { ExecutionSnapshot } from './execution-snapshot';
import { StepFailed } from './errors';
import type { StepAnswer } from './step-model';

/**
 * The payments steps started for their execution and did not wait for (promises that never reject, see
 * billLater), kept until they are done so that the execution's next step and its end, on this worker, can wait
 * for them. An execution that goes on on another worker does not wait: a payment lands a round trip after its step.
 */
export class PendingPayments {
  private readonly pending = new Map<string, InFlight>();

  add(input: ChainRunInput, payment: Promise<void>) {
    const key = executionKey(input);
    const payments = this.pending.get(key) ?? new InFlight();
    this.pending.set(key, payments);
    payments.add(payment, () => {
      if (payments.size === 0 && this.pending.get(key) === payments) this.pending.delete(key);
    });
  }

  async settled(input: ChainRunInput) {
    await this.pending.get(executionKey(input))?.settled();
  }
}

export interface StepBillingDeps {
  /** Model calls of steps are paid with the organization's credits. */
  credits: Pick<CreditsService, 'requireCredits' | 'recordUsage'>;
  logger: Logger;
}

/** How the model calls of an execution's steps are checked against the organization's credits and paid for. */
export class StepBilling {
  private readonly pending = new PendingPayments();

  constructor(private readonly deps: StepBillingDeps) {}

  /**
   * Whether the organization may pay for a model call: started early, awaited just before the call. A positive
   * balance this worker's last payment for the execution left is taken as it is (no read), once that payment is
   * done (billLater); anything else is read.
   */
  creditCheck(input: ChainRunInput, known?: ExecutionSnapshot): Promise<void> {
    const check = (async () => {
      if (known) await this.pending.settled(input);
      if (known?.balance !== undefined && known.balance > 0) return;
      try {
        await this.deps.credits.requireCredits(input.organizationId);
      } catch (err) {
        if (err instanceof InsufficientCreditsError)
          throw new StepFailed("the organization's credits are used up; an operator can grant more");
        throw err;
      }
    })();
    check.catch(() => undefined); // the balance is read at once; a step that never asks the model (runIf) ignores a refusal
    return check;
  }

  /** Pays for a step's model calls; keeps the balance it leaves. */
  async bill(input: ChainStepInput, usage: StepAnswer['usage'], snapshot?: ExecutionSnapshot) {
    for (const call of usage) {
      const { balance } = await this.deps.credits.recordUsage(input.organizationId, {
        purpose: 'chain-step',
        model: call.model,
        usage: { prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens },
        reference: input.stepId,
      });
      if (snapshot) snapshot.balance = balance;
    }
  }

  /**
   * Pays for a step's model calls once its result is written, without holding the step up: the execution's next
   * step (its credit check) and its end wait for it, on this worker. A worker dying between the result and the
   * payment loses the charge, as when the two ran side by side; a payment that fails is logged, since a retry of
   * the recorded step would not make it either.
   */
  billLater(input: ChainStepInput, usage: StepAnswer['usage'], snapshot: ExecutionSnapshot) {
    this.pending.add(
      input,
      this.bill(input, usage, snapshot).catch((err: unknown) =>
        this.deps.logger.error(
          { err, organizationId: input.organizationId, runId: input.runId, stepId: input.stepId },
          'a chain step could not be paid for',
        ),
      ),
    );
  }

  /** Pays for the calls a failed step made; a payment that fails is logged (the step's failure is what counts). */
  async billFailed(input: ChainStepInput, usage: StepAnswer['usage']) {
    await this.bill(input, usage).catch((billing: unknown) =>
      this.deps.logger.error(
        { err: billing, organizationId: input.organizationId, runId: input.runId, stepId: input.stepId },
        'the model calls of a failed chain step could not be paid for',
      ),
    );
  }

  /** Waits for the payments the execution's steps did not wait for, on this worker. */
  settled(input: ChainRunInput) {
    return this.pending.settled(input);
  }
}
