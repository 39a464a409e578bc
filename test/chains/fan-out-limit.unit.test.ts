import { expect } from 'chai';
import { AppError } from '@lib/errors';
import { refuseLongFanOut } from '@lib/chains/fan-out-limit';

const payload = { rows: [1, 2, 3, 4] };
const refusal = (planned: Parameters<typeof refuseLongFanOut>[0], max: number) => {
  try {
    refuseLongFanOut(planned, payload, max);
    return null;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    const e = err as AppError;
    return { status: e.status, code: e.code, message: e.message, details: e.details };
  }
};

// docs/chains.md "Fan-out": a run whose input already holds more than CHAIN_FANOUT_MAX elements at a step's path
// is refused (400 fanout_too_large); only what is certain is refused (a step with a runIf may be skipped).
describe('the fan-out ceiling over a run input', () => {
  it('refuses a step that fans out over more than the ceiling from the input, naming the step', () => {
    expect(refusal([{ stepOrder: 2, name: 'rows', forEachElement: '$.input.rows' }], 3)).to.deep.equal({
      status: 400,
      code: 'fanout_too_large',
      message:
        'step 2 (rows): forEachElement $.input.rows selects 4 elements; a fan-out step runs over at most 3 (CHAIN_FANOUT_MAX)',
      details: { limit: 3, variable: 'CHAIN_FANOUT_MAX', stepOrder: 2 },
    });
    expect(refusal([{ stepOrder: 1, name: '', forEachElement: '$.input.rows[*]' }], 2)!.message).to.equal(
      'step 1: forEachElement $.input.rows[*] selects 4 elements; a fan-out step runs over at most 2 (CHAIN_FANOUT_MAX)',
    );
  });

  it('accepts exactly the ceiling, a step with a runIf, a path the input does not answer, and plain steps', () => {
    expect(refusal([{ stepOrder: 1, name: 'a', forEachElement: '$.input.rows' }], 4)).to.equal(null);
    expect(refusal([{ stepOrder: 1, name: 'a', forEachElement: '$.input.rows', runIf: 'x' }], 3)).to.equal(
      null,
    );
    expect(refusal([{ stepOrder: 1, name: 'a', forEachElement: '$.step1' }], 3)).to.equal(null);
    expect(refusal([{ stepOrder: 1, name: 'a' }], 0)).to.equal(null);
  });
});
