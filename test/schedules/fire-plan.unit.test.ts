/* eslint-disable @typescript-eslint/require-await -- the stand-ins are async like the repositories they replace */
import { expect } from 'chai';
import { schedulePlan } from '@lib/schedules/fire-plan';

/**
 * What one schedule handler does for one fire, over in-memory repositories. A fire of a trigger deleted since (a
 * tombstone reads as missing) or of a handler removed since runs nothing (docs/schedules.md).
 */

const FIRE = '2026-03-10T07:30:00Z';

function plan(trigger: object | null, handler: object | null) {
  const store = {
    scheduleTriggers: { get: async () => trigger },
    scheduleHandlers: { get: async () => handler },
  };
  const run = schedulePlan({ tenant: () => store } as never);
  return run({
    organizationId: 'org-1',
    source: 'schedule',
    parentId: 'sch-1',
    eventKey: FIRE,
    handlerId: 'h-1',
  } as never);
}

const trigger = { _id: 'sch-1', name: 'Morning report' };
const agentHandler = {
  handlerType: 'agent',
  creatorUserId: 'u-1',
  agentId: 'agt-1',
  instructions: 'Summarise the night.',
  inputMappingJson: '{"city":"Oslo"}',
};

describe('schedule fire plan (unit)', () => {
  it('runs nothing for a trigger deleted since, or a handler removed since', async () => {
    expect(await plan(null, agentHandler)).to.equal(null);
    expect(await plan(trigger, null)).to.equal(null);
    expect(await plan(null, null)).to.equal(null);
  });

  it("hands an agent the handler's inputs after its instructions, in a conversation titled by trigger and fire", async () => {
    expect(await plan(trigger, agentHandler)).to.deep.equal({
      handlerType: 'agent',
      creatorUserId: 'u-1',
      agent: {
        agentId: 'agt-1',
        title: 'Morning report (2026-03-10T07:30:00Z)',
        message:
          'Summarise the night.\n\nInputs: {"city":"Oslo"}\n\n(Schedule "Morning report", run of 2026-03-10T07:30:00Z)',
      },
    });
  });
});
