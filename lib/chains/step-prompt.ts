import type OpenAI from 'openai';

/** The request of POST /orgs/{org}/chains/from-prompt (shape validated by openapi.yaml). */
export interface StepPromptInput {
  prompt: string;
  isFirstStep?: boolean;
  /** An agent's reply the step should build on (for example the text a step will receive). */
  agentResponse?: string;
  /** An example of the chain's input. */
  workflowInput?: Record<string, unknown>;
  /** The chain as it is so far (for example its GET representation with its steps). */
  existingWorkflow?: Record<string, unknown>;
}

type Message = OpenAI.Chat.ChatCompletionMessageParam;

const SYSTEM = [
  'You design one step of an action chain. A chain runs its steps in order; each step is one call to a language',
  "model that answers in JSON matching the step's outputSchema, and the fields of that answer join the chain",
  'state that later steps read.',
  '',
  'Write the step the user asks for:',
  '- name: a short title; description: one or two sentences for the people who maintain the chain.',
  '- instructions: what the model must do when the step runs, addressed to that model. They are a Handlebars',
  "  template over the chain state: {{input.<field>}} is a field of the chain's input, {{<field>}} a field an",
  '  earlier step added, {{json <field>}} prints an object or array as JSON. Reference only fields that exist.',
  '- reasoning: none for extraction and formatting, low or medium for judgement, high for hard multi-step',
  '  problems.',
  '- outputSchema: a JSON Schema (draft-07, without $schema) with "type": "object" and "properties" naming every',
  '  field the step adds, each with a type and a description, and "required" listing them. Prefer few, clearly',
  '  named fields (camelCase).',
  'Answer with the JSON object only.',
].join('\n');

const FIRST_STEP = [
  'This is the first step of the chain: also write inputSchema, a JSON Schema of the same kind describing the',
  'input the whole chain takes; the instructions read it as {{input.<field>}}.',
].join(' ');

const fenced = (label: string, value: unknown) =>
  `${label}:\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\``;

/** The conversation that asks the model for the step. */
export function stepPromptMessages(input: StepPromptInput): Message[] {
  const parts = [`Write this step:\n${input.prompt}`];
  if (input.isFirstStep) parts.push(FIRST_STEP);
  else parts.push('Earlier steps exist: do not write an inputSchema.');
  if (input.existingWorkflow) parts.push(fenced('The chain so far', input.existingWorkflow));
  if (input.workflowInput) parts.push(fenced("An example of the chain's input", input.workflowInput));
  if (input.agentResponse)
    parts.push(`An agent's response the step builds on:\n"""\n${input.agentResponse}\n"""`);
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** The follow-up after an answer that failed its checks: the problems, and the request to answer again. */
export function retryMessage(problems: readonly string[]): Message {
  return {
    role: 'user',
    content: [
      'That answer cannot be used. Its problems:',
      ...problems.map((p) => `- ${p}`),
      'Answer again with the whole step as one JSON object that fixes every problem.',
    ].join('\n'),
  };
}
