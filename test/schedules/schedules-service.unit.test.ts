/* eslint-disable @typescript-eslint/require-await -- the stand-ins are async like the repositories and services they replace */
import { expect } from 'chai';
import { AppError } from '@lib/errors';
import { SchedulesService, type ScheduleBody } from '@lib/schedules/schedules.service';

/**
 * Schedule triggers over in-memory stand-ins: ids carry the readable `sch_` prefix (lib/ids.ts), a trigger
 * deleted between the read and the write is a 404, and `nextRun` is null when the stored cron does not parse
 * (docs/schedules.md "Runs summary").
 */

const ctx = { organizationId: 'org-1', userId: 'u-1' } as never;
const record = (cronExpression: string) => ({
  _id: 'sch-1',
  organizationId: 'org-1',
  name: 'Morning report',
  description: '',
  cronExpression,
  revision: 1,
  creatorUserId: 'u-1',
});

function service(stored: object | null, afterUpdate: object | null = stored) {
  const scheduleTriggers = {
    get: async () => stored,
    update: async () => afterUpdate,
    create: async (id: string) => ({ ...record('30 7 * * *'), _id: id }),
  };
  return new SchedulesService(
    { tenant: () => ({ scheduleTriggers }) } as never,
    { trySync: async () => true, runningFires: async () => 0 } as never,
    { latest: async () => null },
  );
}

const body = { name: 'Morning report', cronExpression: '30 7 * * *' } as ScheduleBody;

describe('schedules service (unit)', () => {
  it('gives a new trigger an sch_ id', async () => {
    const view = await service(null).create(ctx, body);
    expect(view.triggerId).to.match(/^sch_./);
  });

  it('answers 404 when the trigger is deleted between the read and the update', async () => {
    let failure: unknown = null;
    await service(record('30 7 * * *'), null)
      .update(ctx, 'sch-1', body)
      .catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(AppError);
    expect((failure as AppError).status).to.equal(404);
    expect((failure as Error).message).to.equal('schedule not found');
  });

  it('answers nextRun null for a stored cron that does not parse', async () => {
    const runs = await service(record('not a cron')).runs(ctx, 'sch-1');
    expect(runs.nextRun).to.equal(null);
  });
});
