import type { CustomSlotSupplier, SlotInfo, SlotReserveContext } from '@temporalio/worker';
import { expect } from 'chai';
import { InteractiveFirst } from '@worker/interactive-first';

/*
 * Interactive first (docs/admission.md): while a turn's task runs in a worker process, and for a short hold
 * after, that process's background workers hold at most a few slots of each kind; otherwise they have their
 * maximum. A held-back reservation waits (in Temporal's queue, as the poll is not made) and is granted once turns
 * are quiet.
 */
const ctx = {} as SlotReserveContext;
const workflow: SlotInfo = { type: 'workflow', workflowType: 'agentTurnWorkflow', isSticky: false };

describe('interactive first (worker slot suppliers)', () => {
  let clock = 0;
  const now = () => clock;
  const reserveAll = (supplier: CustomSlotSupplier<SlotInfo>, n: number) =>
    Array.from({ length: n }, () => supplier.tryReserveSlot(ctx));

  it('gives the background its maximum while no turn runs, and only the held-back number while one does', () => {
    const first = new InteractiveFirst(2, 1000, now);
    const background = first.backgroundSlots<SlotInfo>(5);
    const interactive = first.interactiveSlots<SlotInfo>(3);
    expect(reserveAll(background, 6).filter(Boolean)).to.have.length(5);
    for (let i = 0; i < 5; i++) background.releaseSlot({ permit: {} });

    const turn = interactive.tryReserveSlot(ctx)!;
    // A reserved interactive slot that runs nothing (an idle poll) holds nothing back.
    expect(first.interactive).to.equal(false);
    interactive.markSlotUsed({ permit: turn, slotInfo: workflow });
    expect(first.interactive).to.equal(true);
    expect(reserveAll(background, 5).filter(Boolean)).to.have.length(2);
  });

  it('keeps holding back for the hold after the last turn ended, then hands out the maximum again', () => {
    const first = new InteractiveFirst(1, 1000, now);
    const background = first.backgroundSlots<SlotInfo>(3);
    const interactive = first.interactiveSlots<SlotInfo>(3);
    const turn = interactive.tryReserveSlot(ctx)!;
    interactive.markSlotUsed({ permit: turn, slotInfo: workflow });
    expect(background.tryReserveSlot(ctx)).to.not.equal(null);
    expect(background.tryReserveSlot(ctx)).to.equal(null);

    interactive.releaseSlot({ permit: turn, slotInfo: workflow });
    clock += 999;
    expect(first.interactive).to.equal(true);
    expect(background.tryReserveSlot(ctx)).to.equal(null);
    clock += 1;
    expect(first.interactive).to.equal(false);
    expect(background.tryReserveSlot(ctx)).to.not.equal(null);
    expect(background.tryReserveSlot(ctx)).to.not.equal(null);
    expect(background.tryReserveSlot(ctx)).to.equal(null);
  });

  it('grants a waiting background reservation once a slot is given back, and rejects it when aborted', async () => {
    const first = new InteractiveFirst(1, 0, now);
    const background = first.backgroundSlots<SlotInfo>(1);
    const held = background.tryReserveSlot(ctx)!;
    const abort = new AbortController();
    const aborted = background.reserveSlot(ctx, abort.signal);
    const waiting = background.reserveSlot(ctx, new AbortController().signal);
    abort.abort('shutting down');
    // Rejected with the signal's own reason (the SDK logs an error for any other).
    const reason = await aborted.then(
      () => 'granted',
      (err: unknown) => err,
    );
    expect(reason).to.equal('shutting down');
    background.releaseSlot({ permit: held });
    expect(await waiting).to.deep.equal({});
    // The aborted one took nothing: the single slot is the granted one.
    expect(background.tryReserveSlot(ctx)).to.equal(null);
  });

  it('never gives an interactive worker more than its own maximum', () => {
    const first = new InteractiveFirst(1, 0, now);
    expect(reserveAll(first.interactiveSlots<SlotInfo>(4), 6).filter(Boolean)).to.have.length(4);
  });
});
