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
});
