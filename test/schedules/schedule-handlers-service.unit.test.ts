/* eslint-disable @typescript-eslint/require-await -- the stand-ins are async like the repositories and services they replace */
import { expect } from 'chai';
import { AppError } from '@lib/errors';
import { ScheduleHandlersService, type ScheduleHandlerBody } from '@lib/schedules/schedule-handlers.service';

/**
 * The handler rules of docs/schedules.md over in-memory stand-ins: each type needs its own target and no other's,
 * PUT cannot change type or target, and a handler gone meanwhile is a 404.
 */

const ctx = { organizationId: 'org-1', userId: 'u-1' } as never;
const stored = {
  _id: 'shd-1',
  triggerId: 'sch-1',
  organizationId: 'org-1',
  handlerType: 'agent',
  agentId: 'agt-1',
  actionChainId: null,
  workflowId: null,
  instructions: 'Summarise the night.',
  inputMappingJson: null,
};

function service(updated: object | null = stored) {
  const scheduleHandlers = {
    get: async () => stored,
    update: async () => updated,
    create: async () => stored,
  };
  const names = { agent: () => null, chain: () => null };
  return new ScheduleHandlersService(
    { tenant: () => ({ scheduleHandlers }) } as never,
    { trigger: async () => ({}) } as never,
    { names: async () => names, checkAgent: async () => {}, checkChain: async () => {} } as never,
  );
}

/** The status and message the call fails with, or 'ok'. */
async function outcome(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return 'ok';
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return `${(err as AppError).status} ${(err as Error).message}`;
  }
}

describe('schedule handlers service (unit)', () => {
  it("refuses a body without its type's target, or with another type's", async () => {
    const s = service();
    const body = (b: object) => ({ instructions: 'x', ...b }) as ScheduleHandlerBody;
    expect(await outcome(s.create(ctx, 'sch-1', body({ handlerType: 'agent' })))).to.equal(
      "400 a 'agent' handler needs agentId",
    );
    expect(
      await outcome(s.create(ctx, 'sch-1', body({ handlerType: 'workflow', workflowId: 'w', agentId: 'a' }))),
    ).to.equal("400 a 'workflow' handler takes workflowId, not agentId");
  });

  it('refuses a PUT that changes the type or the target', async () => {
    const s = service();
    const put = (b: object) =>
      s.update(ctx, 'sch-1', 'shd-1', { instructions: 'y', ...b } as ScheduleHandlerBody);
    expect(await outcome(put({ handlerType: 'action-chain', actionChainId: 'agt-1' }))).to.match(/^400 /);
    expect(await outcome(put({ handlerType: 'agent', agentId: 'agt-2' }))).to.match(/^400 /);
    expect(await outcome(put({ handlerType: 'agent', agentId: 'agt-1' }))).to.equal('ok');
  });

  it('answers 404 when the handler is removed between the read and the update', async () => {
    const s = service(null);
    const body = { handlerType: 'agent', agentId: 'agt-1', instructions: 'y' } as ScheduleHandlerBody;
    expect(await outcome(s.update(ctx, 'sch-1', 'shd-1', body))).to.equal('404 schedule handler not found');
  });
});
