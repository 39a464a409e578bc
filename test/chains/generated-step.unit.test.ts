import { expect } from 'chai';
import { answerSchema, checkAnswer } from '@lib/chains/generated-step';

const objectSchema = { type: 'object', properties: { summary: { type: 'string' } }, required: ['summary'] };
const step = {
  name: 'Summarise',
  description: 'Summarises the text.',
  instructions: 'Summarise {{input.text}}',
  reasoning: 'low',
  outputSchema: objectSchema,
};
const problemsOf = (answer: unknown, isFirstStep = false) => {
  const check = checkAnswer(typeof answer === 'string' ? answer : JSON.stringify(answer), isFirstStep);
  return check.ok ? [] : check.problems;
};

describe('checking a generated chain step', () => {
  it('asks the model for inputSchema only on a first step', () => {
    expect(answerSchema(true).required).to.include('inputSchema');
    expect(answerSchema(false).required).not.to.include('inputSchema');
    expect(answerSchema(false).properties).not.to.have.property('inputSchema');
  });

  it('accepts a complete step, dropping what the step does not have', () => {
    const check = checkAnswer(JSON.stringify({ ...step, inputSchema: objectSchema, extra: 1 }), false);
    expect(check).to.deep.equal({ ok: true, step });
    const first = checkAnswer(JSON.stringify({ ...step, inputSchema: objectSchema }), true);
    expect(first).to.deep.equal({ ok: true, step: { ...step, inputSchema: objectSchema } });
  });

  it('names every problem of an unusable answer', () => {
    expect(problemsOf('')).to.deep.equal(['the answer is empty']);
    expect(problemsOf('{"name":')[0]).to.match(/^the answer is not JSON/);
    expect(problemsOf({ ...step, reasoning: 'extreme', name: '  ' })).to.have.members([
      'reasoning must be one of none, low, medium, high',
      'name must not be blank',
    ]);
    expect(problemsOf({ ...step, outputSchema: undefined })).to.deep.equal([
      "the answer must have required property 'outputSchema'",
    ]);
    expect(problemsOf(step, true)).to.deep.equal(["the answer must have required property 'inputSchema'"]);
    expect(problemsOf({ ...step, outputSchema: { type: 'array', items: {} } })).to.deep.equal([
      'outputSchema must have "type": "object"',
      'outputSchema must have "properties": an object naming at least one field',
    ]);
    expect(problemsOf({ ...step, outputSchema: { type: 'object', properties: {} } })).to.deep.equal([
      'outputSchema must have "properties": an object naming at least one field',
    ]);
    const uncompilable = problemsOf(
      {
        ...step,
        inputSchema: { type: 'object', properties: { a: { type: 'strin' } } },
      },
      true,
    );
    expect(uncompilable).to.have.length(1);
    expect(uncompilable[0]).to.match(/^inputSchema is not a valid JSON Schema: schema is invalid/);
    const huge = { type: 'object', properties: { a: { type: 'string', description: 'x'.repeat(20_000) } } };
    expect(problemsOf({ ...step, outputSchema: huge })).to.deep.equal([
      'outputSchema is longer than 20000 characters as JSON',
    ]);
  });

  it('compiles each answer on its own, so a schema $id seen before is no conflict', () => {
    const withId = { ...objectSchema, $id: 'https://example.test/step' };
    expect(problemsOf({ ...step, outputSchema: withId })).to.deep.equal([]);
    expect(problemsOf({ ...step, outputSchema: withId })).to.deep.equal([]);
  });
});
