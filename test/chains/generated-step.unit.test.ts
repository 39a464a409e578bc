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

  it('asks the model for exactly this schema (docs/chains.md, from-prompt), and no other keys', () => {
    const objectOf = (description: string) => ({ type: 'object', description });
    const expected = {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '\\S', maxLength: 200, description: 'A short title for the step' },
        description: {
          type: 'string',
          maxLength: 2000,
          description: 'One or two sentences: what the step does, for the people who maintain the chain',
        },
        instructions: {
          type: 'string',
          pattern: '\\S',
          maxLength: 20000,
          description:
            'The instructions the model follows when the step runs (a Handlebars template over the chain state)',
        },
        reasoning: {
          type: 'string',
          enum: ['none', 'low', 'medium', 'high'],
          description: 'How much the model should reason when the step runs',
        },
        outputSchema: objectOf(
          'JSON Schema of what the step adds to the chain state: {"type":"object","properties":{...},"required":[...]}',
        ),
        inputSchema: objectOf(
          'JSON Schema of the input the whole chain takes: {"type":"object","properties":{...},"required":[...]}',
        ),
      },
      required: ['name', 'description', 'instructions', 'reasoning', 'outputSchema', 'inputSchema'],
      additionalProperties: false,
    };
    expect(answerSchema(true)).to.deep.equal(expected);
    const later: Record<string, unknown> = { ...expected.properties };
    delete later.inputSchema;
    expect(answerSchema(false)).to.deep.equal({
      ...expected,
      properties: later,
      required: expected.required.slice(0, 5),
    });
  });

  it('trims the name, treats a blank or missing answer as empty, and names a wrong type', () => {
    const check = checkAnswer(JSON.stringify({ ...step, name: '  Summarise ' }), false);
    expect(check).to.deep.equal({ ok: true, step });
    expect(problemsOf('   ')).to.deep.equal(['the answer is empty']);
    expect(checkAnswer(null, false)).to.deep.equal({ ok: false, problems: ['the answer is empty'] });
    expect(problemsOf({ ...step, name: 5 })).to.deep.equal(['name must be string']);
  });

  it('refuses properties that are not an object naming a field, and takes a schema of exactly 20,000 characters', () => {
    for (const properties of ['abc', null, ['a']])
      expect(
        problemsOf({ ...step, outputSchema: { type: 'object', properties } }),
        JSON.stringify(properties),
      ).to.deep.equal([
        'outputSchema must have "properties": an object naming at least one field',
        'outputSchema is not a valid JSON Schema: schema is invalid: data/properties must be object',
      ]);
    // {"type":"object","properties":{"a":{"type":"string","description":""}}} is 71 characters
    const exactly = {
      type: 'object',
      properties: { a: { type: 'string', description: 'x'.repeat(20_000 - 71) } },
    };
    expect(JSON.stringify(exactly)).to.have.length(20_000);
    expect(problemsOf({ ...step, outputSchema: exactly })).to.deep.equal([]);
  });

  it('compiles each answer on its own, so a schema $id seen before is no conflict', () => {
    const withId = { ...objectSchema, $id: 'https://example.test/step' };
    expect(problemsOf({ ...step, outputSchema: withId })).to.deep.equal([]);
    expect(problemsOf({ ...step, outputSchema: withId })).to.deep.equal([]);
  });
});
