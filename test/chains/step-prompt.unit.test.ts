import { expect } from 'chai';
import { retryMessage, stepPromptMessages } from '@lib/chains/step-prompt';
import { tenantAjv } from '@lib/chains/tenant-ajv';

/*
 * The conversation POST …/chains/from-prompt sends the model (docs/chains.md, steps generated from a prompt), and
 * the Ajv a tenant's step schemas compile with. Expected texts are written out.
 */
describe('a step asked of the model', () => {
  const userText = (input: Parameters<typeof stepPromptMessages>[0]) => {
    const messages = stepPromptMessages(input);
    expect(messages.map((m) => m.role)).to.deep.equal(['system', 'user']);
    expect(messages[0]!.content).to.contain('You design one step of an action chain.');
    return messages[1]!.content as string;
  };

  it('asks a later step without an inputSchema, and the first step with one', () => {
    expect(userText({ prompt: 'Summarise the ticket' })).to.equal(
      'Write this step:\nSummarise the ticket\n\nEarlier steps exist: do not write an inputSchema.',
    );
    const first = userText({ prompt: 'Classify', isFirstStep: true });
    expect(first).to.match(
      /^Write this step:\nClassify\n\nThis is the first step of the chain: also write inputSchema/,
    );
    expect(first).not.to.contain('Earlier steps exist');
  });

  it('adds the chain so far, an example input and an agent response, in that order, when given', () => {
    const text = userText({
      prompt: 'Draft a reply',
      existingWorkflow: { name: 'Triage' },
      workflowInput: { message: 'hi' },
      agentResponse: 'The customer is upset.',
    });
    expect(text).to.equal(
      [
        'Write this step:\nDraft a reply',
        'Earlier steps exist: do not write an inputSchema.',
        'The chain so far:\n```json\n{\n  "name": "Triage"\n}\n```',
        'An example of the chain\'s input:\n```json\n{\n  "message": "hi"\n}\n```',
        'An agent\'s response the step builds on:\n"""\nThe customer is upset.\n"""',
      ].join('\n\n'),
    );
  });

  it('answers a failed attempt with each problem on a line of its own', () => {
    expect(retryMessage(['no name', 'outputSchema: must be an object'])).to.deep.equal({
      role: 'user',
      content:
        'That answer cannot be used. Its problems:\n- no name\n- outputSchema: must be an object\n' +
        'Answer again with the whole step as one JSON object that fixes every problem.',
    });
  });
});

describe("a tenant's schema compiler", () => {
  it('reports every error, tolerates unknown keywords and matches patterns', () => {
    const validate = tenantAjv().compile({
      type: 'object',
      'x-note': 'kept',
      properties: { code: { type: 'string', pattern: '^[a-z]+$' }, n: { type: 'number' } },
      required: ['code', 'n'],
    });
    expect(validate({ code: 'abc', n: 1 })).to.equal(true);
    expect(validate({ code: 'ABC' })).to.equal(false);
    // both problems, not only the first
    expect(validate.errors?.map((e) => e.keyword).sort()).to.deep.equal(['pattern', 'required']);
  });

  it('names at most the first 100 characters of a long pattern it refuses, and what to leave out', () => {
    const pattern = `(a)\\1${'b'.repeat(150)}`;
    expect(() => tenantAjv().compile({ type: 'string', pattern })).to.throw(
      `pattern ${JSON.stringify(pattern.slice(0, 100))} cannot be matched in linear time; ` +
        'leave out backreferences and lookarounds (and \\p{…} classes)',
    );
  });

  it('refuses a pattern the linear-time engine cannot run, naming it', () => {
    expect(() => tenantAjv().compile({ type: 'string', pattern: '^(a)\\1$' })).to.throw(
      /pattern "\^\(a\)\\\\1\$" cannot be matched in linear time/,
    );
  });
});
