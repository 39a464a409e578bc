import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AppError } from '@lib/errors';
import {
  checkFileInput,
  checkSchemaSize,
  firstStep,
  stepFieldsFromBody,
  validatorFor,
  type StepBody,
} from '@lib/chains/step-fields';

/*
 * A step as the API takes it and as it is stored (openapi.yaml's ChainStep, docs/chains.md): the defaults of
 * every field left out, every problem of one step named in one 400, the schema rules (an object with properties;
 * an output never named `input`), the size budget over one request's schemas, the first step by stepOrder, and
 * a file chain's first step taking the file.
 */
function refusal(fn: () => unknown): { status: number; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, message: err.message };
    throw err;
  }
  throw new Error('expected a refusal');
}

const objectSchema = (properties: Record<string, unknown>) => ({ type: 'object', properties });

describe('chain step fields', () => {
  it('stores a bare step with the documented defaults', () => {
    expect(stepFieldsFromBody({ stepOrder: 3 })).to.deep.equal({
      stepOrder: 3,
      name: '',
      description: '',
      instructions: '',
      reasoning: 'none',
      enabled: true,
      inputSchemaJson: null,
      outputSchemaJson: null,
      showWholeChainState: false,
      forEachElement: null,
      toolChoice: null,
      runIf: null,
      failBeforeRunningIf: null,
      failAfterRunningIf: null,
    });
  });

  it('keeps what was given, schemas as JSON text, and stores an empty expression as none', () => {
    const body: StepBody = {
      stepOrder: 1,
      name: 'Classify',
      description: 'd',
      instructions: 'Classify {{input.message}}',
      reasoning: 'high',
      enabled: false,
      inputSchema: objectSchema({ message: { type: 'string' } }),
      outputSchema: objectSchema({ category: { type: 'string' } }),
      showWholeChainState: true,
      forEachElement: '',
      toolChoice: '',
      runIf: '',
      failBeforeRunningIf: '',
      failAfterRunningIf: '',
    };
    expect(stepFieldsFromBody(body)).to.deep.equal({
      stepOrder: 1,
      name: 'Classify',
      description: 'd',
      instructions: 'Classify {{input.message}}',
      reasoning: 'high',
      enabled: false,
      inputSchemaJson: '{"type":"object","properties":{"message":{"type":"string"}}}',
      outputSchemaJson: '{"type":"object","properties":{"category":{"type":"string"}}}',
      showWholeChainState: true,
      forEachElement: null,
      toolChoice: null,
      runIf: null,
      failBeforeRunningIf: null,
      failAfterRunningIf: null,
    });
    const set = stepFieldsFromBody({
      stepOrder: 2,
      forEachElement: '$.rows[*]',
      toolChoice: 'search',
      runIf: 'input.go',
      failBeforeRunningIf: 'input.stop',
      failAfterRunningIf: 'result.bad',
    });
    expect(set).to.include({
      forEachElement: '$.rows[*]',
      toolChoice: 'search',
      runIf: 'input.go',
      failBeforeRunningIf: 'input.stop',
      failAfterRunningIf: 'result.bad',
    });
  });

  it('names every problem of a step in one 400', () => {
    const { status, message } = refusal(() =>
      stepFieldsFromBody({
        stepOrder: 1,
        instructions: 'Hello {{#if}}',
        runIf: 'a ===',
        failBeforeRunningIf: 'b ===',
        failAfterRunningIf: 'c ===',
        forEachElement: 'rows',
        inputSchema: { type: 'string' },
        outputSchema: objectSchema({ input: { type: 'string' } }),
      }),
    );
    expect(status).to.equal(400);
    expect(message).to.match(/^invalid step: /);
    for (const part of [
      'instructions: ',
      'runIf: ',
      'failBeforeRunningIf: ',
      'failAfterRunningIf: ',
      'forEachElement: must be a JSONPath starting with $',
      "inputSchema: must have type 'object'",
      "outputSchema: must not have a property named 'input'",
    ])
      expect(message).to.contain(part);
  });

  it('takes only object schemas that name their properties and compile', () => {
    const problem = (schema: Record<string, unknown>) =>
      refusal(() => stepFieldsFromBody({ stepOrder: 1, inputSchema: schema })).message;
    expect(problem({ type: 'object' })).to.contain('inputSchema: must have properties');
    expect(problem({ type: 'object', properties: null })).to.contain('must have properties');
    expect(problem({ type: 'object', properties: [] })).to.contain('must have properties');
    expect(problem({ type: 'object', properties: { a: { type: 'no-such-type' } } })).to.match(
      /inputSchema: .+/,
    );
    // an input may name a property `input`; only an output may not (the state keeps the chain's input there)
    expect(
      stepFieldsFromBody({ stepOrder: 1, inputSchema: objectSchema({ input: {} }) }).inputSchemaJson,
    ).to.equal('{"type":"object","properties":{"input":{}}}');
  });

  it("refuses the steps' schemas together once they hold more objects and arrays than the budget", () => {
    // each schema below holds 3 objects: itself, its properties, the one property's schema
    const schema = objectSchema({ a: { type: 'string' } });
    const bodies: StepBody[] = [
      { stepOrder: 1, inputSchema: schema, outputSchema: schema },
      { stepOrder: 2, outputSchema: schema },
    ];
    expect(() => checkSchemaSize(bodies, 9)).not.to.throw();
    const { status, message } = refusal(() => checkSchemaSize(bodies, 8));
    expect(status).to.equal(400);
    expect(message).to.contain('more than 8 objects and arrays');
    expect(message).to.contain('CHAIN_SCHEMA_MAX_NODES');
  });

  it('finds the first step by the lowest stepOrder, whatever order the steps come in, leaving them as they were', () => {
    const steps = [{ stepOrder: 5 }, { stepOrder: 2 }, { stepOrder: 9 }];
    expect(firstStep(steps)).to.equal(steps[1]);
    expect(steps.map((s) => s.stepOrder)).to.deep.equal([5, 2, 9]);
    expect(firstStep([])).to.equal(undefined);
  });

  it('refuses a file chain whose first step does not take the file, naming what is missing', () => {
    const step = (stepOrder: number, properties: Record<string, unknown> | null) => ({
      stepOrder,
      inputSchemaJson: properties ? JSON.stringify(objectSchema(properties)) : null,
    });
    const all = { fileId: {}, knowledgeBaseId: {}, fileName: {} };
    expect(() => checkFileInput('file', [step(2, {}), step(1, all)])).not.to.throw();
    expect(() => checkFileInput('file', [])).not.to.throw();
    // only file chains are held to it
    expect(() => checkFileInput('json', [step(1, null)])).not.to.throw();

    const { status, message } = refusal(() =>
      checkFileInput('file', [step(1, { fileId: {} }), step(0, { knowledgeBaseId: {} })]),
    );
    expect(status).to.equal(400);
    expect(message).to.contain('(stepOrder 0)');
    expect(message).to.match(/missing: fileId, fileName$/);
    expect(refusal(() => checkFileInput('file', [step(1, null)])).message).to.match(
      /missing: fileId, knowledgeBaseId, fileName$/,
    );
  });

  it('compiles a stored schema once and validates with it', () => {
    const json = JSON.stringify(objectSchema({ n: { type: 'number' } }));
    const validate = validatorFor(json);
    expect(validatorFor(json)).to.equal(validate);
    expect(validate({ n: 1 })).to.equal(true);
    expect(validate({ n: 'x' })).to.equal(false);
  });

  it('names each problem of a step in the details, in order, and the message as their list', () => {
    let err: unknown;
    try {
      stepFieldsFromBody({ stepOrder: 1, forEachElement: 'rows', inputSchema: { type: 'string' } });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).message).to.equal(
      "invalid step: forEachElement: must be a JSONPath starting with $ (for example $.input.items); inputSchema: must have type 'object'",
    );
    expect((err as AppError).details).to.deep.equal([
      { message: 'forEachElement: must be a JSONPath starting with $ (for example $.input.items)' },
      { message: "inputSchema: must have type 'object'" },
    ]);
  });

  it('validates with a schema it has not seen before, and with one it has', () => {
    // a schema no earlier test can have compiled
    const schemaJson = JSON.stringify({
      ...objectSchema({ n: { type: 'number' } }),
      description: randomUUID(),
    });
    expect(validatorFor(schemaJson)({ n: 1 })).to.equal(true);
    expect(validatorFor(schemaJson)({ n: 'one' })).to.equal(false);
  });
});
