/* eslint-disable @typescript-eslint/require-await -- the stand-in is async like the Temporal client it replaces */
import { expect } from 'chai';
import { ScheduleAlreadyRunning } from '@temporalio/client';
import { ensureScheduleReconciler } from '@lib/schedules/reconciler-schedule';

/**
 * The reconciler's own Schedule, over a stand-in Temporal client: every worker calls this at start and one
 * Schedule serves the queue, so a second call finds it and is fine; any other refusal is the caller's to see.
 */

function temporalWith(create: (options: Record<string, unknown>) => Promise<void>) {
  return { taskQueue: 'main', client: { schedule: { create } } } as never;
}

describe('reconciler schedule (unit)', () => {
  it('creates a Schedule that starts the reconciler workflow', async () => {
    const made: Array<Record<string, unknown>> = [];
    const id = await ensureScheduleReconciler(temporalWith(async (o) => void made.push(o)));
    expect(made).to.have.length(1);
    expect(id).to.equal('reconcile-schedules-main');
    expect(made[0]!.scheduleId).to.equal(id);
    expect((made[0]!.action as { type: string }).type).to.equal('startWorkflow');
  });

  it('accepts a Schedule another worker created first', async () => {
    const id = await ensureScheduleReconciler(
      temporalWith(async (o) => {
        throw new ScheduleAlreadyRunning('exists', o.scheduleId as string);
      }),
    );
    expect(id).to.equal('reconcile-schedules-main');
  });

  it('rejects with any other refusal', async () => {
    let failure: unknown = null;
    await ensureScheduleReconciler(
      temporalWith(async () => {
        throw new Error('Temporal unavailable');
      }),
    ).catch((err: unknown) => (failure = err));
    expect((failure as Error | null)?.message).to.equal('Temporal unavailable');
  });
});
