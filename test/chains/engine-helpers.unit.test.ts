import { expect } from 'chai';
import {
  spentBefore,
  StaleSnapshot,
  StepFailed,
  ModelRejected,
  RunSuperseded,
} from '@lib/chains/engine/errors';
import { PendingWrites } from '@lib/chains/engine/execution-cache';
import { checkStateSize } from '@lib/chains/engine/state-size';
import { outputFields } from '@lib/chains/engine/step-outputs';
import type { StepDoc } from '@lib/chains/chain.schema';
import { runPlan } from '@lib/chains/run-plan';
import { schemaOf, step } from './engine-world';

const sizeError = (json: string, max: number) => {
  try {
    checkStateSize(json, 'the state', max);
    return null;
  } catch (err) {
    expect(err).to.be.instanceOf(StepFailed);
    return (err as Error).message;
  }
};

// Small rules of the engine, each from its documented contract (docs/chains.md and the code's comments).
describe('chain engine rules (units)', () => {
  it('refuses a state over CHAIN_STATE_MAX_BYTES counted in UTF-8 bytes, not characters', () => {
    expect(sizeError('abcdef', 6)).to.equal(null);
    expect(sizeError('abcdefg', 6)).to.equal(
      'the state would hold 7 bytes; at most 6 (CHAIN_STATE_MAX_BYTES)',
    );
    // Three characters of three bytes each.
    expect(sizeError('€€€', 6)).to.equal('the state would hold 9 bytes; at most 6 (CHAIN_STATE_MAX_BYTES)');
    expect(sizeError('€€', 6)).to.equal(null);
  });

  it('adds the declared output fields an answer has, or the text as step<stepOrder>', () => {
    const typed = step(2, { outputSchemaJson: schemaOf('a', 'b') }) as unknown as StepDoc;
    expect(outputFields(typed, { a: 1, extra: 2 })).to.deep.equal({ a: 1 });
    expect(outputFields(step(4) as unknown as StepDoc, 'text')).to.deep.equal({ step4: 'text' });
  });

  it('plans the enabled steps that did not succeed or get skipped, in order, or only onlyStep', () => {
    const steps = [1, 2, 3, 4, 5].map((n) => ({
      _id: `s${n}`,
      stepOrder: n,
      name: `n${n}`,
      enabled: n !== 5,
    }));
    const results = {
      s1: { outcome: 'success' as const },
      s2: { outcome: 'skipped' as const },
      s3: { outcome: 'failed' as const },
    };
    expect(runPlan(steps, results, undefined)).to.deep.equal({
      steps: [
        { stepId: 's3', stepOrder: 3, name: 'n3' },
        { stepId: 's4', stepOrder: 4, name: 'n4' },
      ],
    });
    // onlyStep runs that step whatever it did before, and even disabled.
    expect(runPlan(steps, results, 1).steps).to.deep.equal([{ stepId: 's1', stepOrder: 1, name: 'n1' }]);
    expect(runPlan(steps, results, 5).steps).to.deep.equal([{ stepId: 's5', stepOrder: 5, name: 'n5' }]);
  });

  it('names what a failed step spent, and nothing for any other error', () => {
    const spent = { modelCalls: 2, usage: [] };
    expect(spentBefore(new StepFailed('x', spent))).to.equal(spent);
    expect(spentBefore(new StepFailed('x'))).to.equal(null);
    expect(spentBefore(new RunSuperseded('x'))).to.equal(null);
    expect(spentBefore(new Error('x'))).to.equal(null);
  });

  it('names each engine error, for the logs', () => {
    expect(new StepFailed('a').name).to.equal('StepFailed');
    expect(new RunSuperseded('a').name).to.equal('RunSuperseded');
    expect(new ModelRejected('a').name).to.equal('ModelRejected');
    const stale = new StaleSnapshot();
    expect([stale.name, stale.message]).to.deep.equal([
      'StaleSnapshot',
      'the copy of the execution was outdated',
    ]);
  });

  it('knows only the last write it did not wait for, per execution', async () => {
    const writes = new PendingWrites();
    const input = { organizationId: 'o', runId: 'r', generation: 1 };
    writes.add(input, 'a', Promise.resolve(true));
    expect(await writes.written(input, 'a')).to.equal(true);
    expect(await writes.written(input, 'b')).to.equal(false);
    expect(await writes.written({ ...input, generation: 2 }, 'a')).to.equal(false);
    writes.add(input, 'b', Promise.resolve(false));
    expect(await writes.written(input, 'a')).to.equal(false);
    expect(await writes.written(input, 'b')).to.equal(false);
    writes.add(input, 'c', Promise.resolve(true));
    writes.delete(input);
    expect(await writes.written(input, 'c')).to.equal(false);
  });
});
