import { expect } from 'chai';
import {
  cancelSteps,
  endStepsUnderWay,
  finishSteps,
  mergeSteps,
  newSteps,
  parsePlanArgs,
  PlanInputError,
  statusAfterWrite,
  type PlanStep,
} from '@lib/task-plans/task-plan-rules';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PlanInputError);
    return (err as Error).message;
  }
  return expect.fail('accepted');
};

describe('task plan rules', () => {
  it('checks the model’s arguments and says what to fix', () => {
    expect(
      parsePlanArgs({ steps: [{ stepId: 'a', description: ' Do it ', status: 'pending' }] }),
    ).to.deep.equal({
      steps: [{ stepId: 'a', description: 'Do it', status: 'pending' }],
    });
    expect(refusal(() => parsePlanArgs({}))).to.equal('steps must be an array');
    expect(refusal(() => parsePlanArgs({ steps: [{ stepId: 'a', status: 'cancelled' }] }))).to.match(
      /steps\[0\]\.status must be one of pending, in_progress, completed, skipped, failed/,
    );
    expect(refusal(() => parsePlanArgs({ steps: [{ stepId: 'a b', status: 'pending' }] }))).to.match(
      /stepId/,
    );
    expect(
      refusal(() =>
        parsePlanArgs({
          steps: [
            { stepId: 'a', status: 'pending' },
            { stepId: 'a', status: 'pending' },
          ],
        }),
      ),
    ).to.equal('stepId a appears twice');
    expect(refusal(() => parsePlanArgs({ steps: [], type: 'robot' }))).to.match(/type must be one of/);
    expect(refusal(() => parsePlanArgs({ steps: [], status: 'completed' }))).to.match(/status may only be/);
    expect(refusal(() => newSteps([]))).to.equal('a new plan needs at least one step');
    expect(refusal(() => newSteps([{ stepId: 'a', status: 'pending' }]))).to.match(/needs a description/);
  });

  it('changes known steps in place and appends new ones', () => {
    const steps: PlanStep[] = [
      { stepId: '1', description: 'one', status: 'in_progress' },
      { stepId: '2', description: 'two', status: 'pending' },
    ];
    expect(
      mergeSteps(steps, [
        { stepId: '1', status: 'completed' },
        { stepId: '3', description: 'three', status: 'pending' },
      ]),
    ).to.deep.equal([
      { stepId: '1', description: 'one', status: 'completed' },
      { stepId: '2', description: 'two', status: 'pending' },
      { stepId: '3', description: 'three', status: 'pending' },
    ]);
    expect(steps[0]!.status).to.equal('in_progress');
    expect(refusal(() => mergeSteps(steps, [{ stepId: '9', status: 'pending' }]))).to.match(/is new/);
  });

  it('completes a plan whose steps are all completed or skipped, fails it on request, cancels what is left', () => {
    const done: PlanStep[] = [
      { stepId: '1', description: 'one', status: 'completed' },
      { stepId: '2', description: 'two', status: 'skipped' },
    ];
    expect(statusAfterWrite(done)).to.equal('completed');
    expect(statusAfterWrite([...done, { stepId: '3', description: 'x', status: 'failed' }])).to.equal(
      'active',
    );
    expect(statusAfterWrite(done, 'failed')).to.equal('failed');
    expect(statusAfterWrite([])).to.equal('active');
    expect(
      cancelSteps([
        { stepId: '1', description: 'one', status: 'completed' },
        { stepId: '2', description: 'two', status: 'in_progress' },
        { stepId: '3', description: 'three', status: 'pending' },
      ]).map((s) => s.status),
    ).to.deep.equal(['completed', 'in_progress', 'cancelled']);
  });

  it('lets only the step in progress of a cancelled plan finish, and ends it when nobody will', () => {
    const steps: PlanStep[] = [
      { stepId: '1', description: 'one', status: 'in_progress' },
      { stepId: '2', description: 'two', status: 'cancelled' },
    ];
    expect(
      finishSteps(steps, [{ stepId: '1', description: 'one: done', status: 'completed' }]),
    ).to.deep.equal([
      { stepId: '1', description: 'one: done', status: 'completed' },
      { stepId: '2', description: 'two', status: 'cancelled' },
    ]);
    for (const change of [
      { stepId: '2', status: 'in_progress' },
      { stepId: '1', status: 'pending' },
      { stepId: '3', description: 'three', status: 'completed' },
    ] as const)
      expect(refusal(() => finishSteps(steps, [change]))).to.match(/no new task starts/);
    expect(endStepsUnderWay(steps).map((s) => s.status)).to.deep.equal(['cancelled', 'cancelled']);
  });

  it('keeps planId, type and a give-up status, and refuses an empty or non-string planId', () => {
    const step = { stepId: 'a', status: 'pending' };
    expect(
      parsePlanArgs({ planId: 'tpl_1', type: 'browser', status: 'failed', steps: [step] }),
    ).to.deep.equal({ planId: 'tpl_1', type: 'browser', status: 'failed', steps: [step] });
    expect(parsePlanArgs({ type: 'general', steps: [] })).to.deep.equal({ type: 'general', steps: [] });
    for (const planId of ['', 7, null])
      expect(
        refusal(() => parsePlanArgs({ planId, steps: [] })),
        String(planId),
      ).to.equal('planId must be the planId a previous call returned');
  });

  it('takes stepIds of 1 to 64 letters, digits or _ . : - and nothing else', () => {
    const id = (stepId: unknown) => () => parsePlanArgs({ steps: [{ stepId, status: 'pending' }] });
    for (const ok of ['a', 'A-z_0.9:x', 'x'.repeat(64)]) expect(id(ok)().steps[0]!.stepId).to.equal(ok);
    for (const bad of ['', 'x'.repeat(65), 'a b', 'a/b', ' a', 'a ', 12])
      expect(refusal(id(bad)), JSON.stringify(bad)).to.equal(
        'steps[0].stepId must be 1 to 64 letters, digits or _ . : -',
      );
  });

  it('takes descriptions that are non-empty strings of at most 1000 characters, trimmed', () => {
    const described =
      (description: unknown, i = 0) =>
      () =>
        parsePlanArgs({
          steps: [
            ...Array.from({ length: i }, (_, n) => ({ stepId: `s${n}`, status: 'pending' })),
            { stepId: 'd', description, status: 'pending' },
          ],
        });
    expect(described('y'.repeat(1000))().steps[0]!.description).to.have.length(1000);
    expect(refusal(described('y'.repeat(1001), 2))).to.equal(
      'steps[2].description may have at most 1000 characters',
    );
    for (const bad of ['', '   ', 5, null])
      expect(refusal(described(bad)), JSON.stringify(bad)).to.equal(
        'steps[0].description must be a non-empty string',
      );
    // Left out, a step keeps no description key at all.
    expect(parsePlanArgs({ steps: [{ stepId: 'a', status: 'pending' }] }).steps[0]).to.deep.equal({
      stepId: 'a',
      status: 'pending',
    });
  });

  it('takes only step objects, each status the agent may set, and at most 50 steps', () => {
    for (const bad of [null, 'a', ['a']])
      expect(
        refusal(() => parsePlanArgs({ steps: [bad] })),
        JSON.stringify(bad),
      ).to.equal('steps[0] must be an object with stepId and status');
    const statuses = ['pending', 'in_progress', 'completed', 'skipped', 'failed'];
    const all = statuses.map((status, i) => ({ stepId: `s${i}`, status }));
    expect(parsePlanArgs({ steps: all }).steps).to.deep.equal(all);
    expect(refusal(() => parsePlanArgs({ steps: 'a' }))).to.equal('steps must be an array');
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ stepId: `s${i}`, status: 'pending' }));
    expect(parsePlanArgs({ steps: many(50) }).steps).to.have.length(50);
    expect(refusal(() => parsePlanArgs({ steps: many(51) }))).to.equal('a plan has at most 50 steps');
  });

  it('gives a new plan the steps as asked, and keeps a changed plan at 50 steps at most', () => {
    expect(
      newSteps([
        { stepId: 'a', description: 'A', status: 'pending' },
        { stepId: 'b', description: 'B', status: 'in_progress' },
      ]),
    ).to.deep.equal([
      { stepId: 'a', description: 'A', status: 'pending' },
      { stepId: 'b', description: 'B', status: 'in_progress' },
    ]);
    const full: PlanStep[] = Array.from({ length: 49 }, (_, i) => ({
      stepId: `s${i}`,
      description: 'd',
      status: 'pending',
    }));
    const fiftieth = { stepId: 'x', description: 'X', status: 'pending' as const };
    expect(mergeSteps(full, [fiftieth])).to.have.length(50);
    expect(refusal(() => mergeSteps([...full, fiftieth], [{ ...fiftieth, stepId: 'y' }]))).to.equal(
      'a plan has at most 50 steps',
    );
    // A new description replaces the old one; the step stays where it was.
    expect(
      mergeSteps(
        [
          { stepId: '1', description: 'one', status: 'pending' },
          { stepId: '2', description: 'two', status: 'pending' },
        ],
        [{ stepId: '1', description: 'first', status: 'in_progress' }],
      ),
    ).to.deep.equal([
      { stepId: '1', description: 'first', status: 'in_progress' },
      { stepId: '2', description: 'two', status: 'pending' },
    ]);
  });

  it('completes a plan only when every step is completed or skipped; a cancel cancels pending steps and lets the one in progress finish', () => {
    const step = (status: PlanStep['status']): PlanStep => ({ stepId: status, description: status, status });
    expect(statusAfterWrite([step('completed'), step('pending')])).to.equal('active');
    expect(statusAfterWrite([step('skipped'), step('in_progress')])).to.equal('active');
    expect(statusAfterWrite([step('skipped')])).to.equal('completed');
    expect(statusAfterWrite([step('pending')], 'failed')).to.equal('failed');
    const before = ['pending', 'in_progress', 'completed', 'skipped', 'failed'].map((s) =>
      step(s as PlanStep['status']),
    );
    const after = cancelSteps(before);
    // "execution stops after the current task completes": the step in progress is left to finish.
    expect(after.map((s) => s.status)).to.deep.equal([
      'cancelled',
      'in_progress',
      'completed',
      'skipped',
      'failed',
    ]);
    expect(after[0]).to.deep.equal({ stepId: 'pending', description: 'pending', status: 'cancelled' });
    // The plan as stored is not changed in place.
    expect(before.map((s) => s.status)).to.deep.equal([
      'pending',
      'in_progress',
      'completed',
      'skipped',
      'failed',
    ]);
  });

  it('names the plan types a model may choose', () => {
    expect(refusal(() => parsePlanArgs({ steps: [], type: 'robot' }))).to.equal(
      'type must be one of general, browser',
    );
  });
});
