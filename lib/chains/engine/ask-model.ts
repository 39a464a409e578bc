import type { ChainStepInput } from '@contracts';
import { renderTemplate } from '@lib/chains/expressions';
import type { Attempt } from './attempt';
import type { StepBilling } from './billing';
import type { ChainEngineDeps } from './deps';
import { spentBefore, StepFailed } from './errors';
import type { StepRun } from './execution-snapshot';
import { answerStep } from './step-model';
import type { StepTools } from './step-tools';

/**
 * Renders a step's instructions (for a fan-out element, over the state plus `element` and `elementIndex`) and
 * asks the model once `credit` (the credit check) holds; returns its (schema-checked) answer.
 */
export async function askModel(
  deps: Pick<ChainEngineDeps, 'llm' | 'chains'>,
  billing: StepBilling,
  input: ChainStepInput,
  run: StepRun,
  tools: StepTools,
  credit: Promise<void>,
  attempt: Attempt,
  element?: { value: unknown; index: number },
) {
  const { chain, step, state } = run;
  const context = element ? { ...state, element: element.value, elementIndex: element.index } : state;
  let instructions: string;
  try {
    instructions = renderTemplate(step.instructions, context);
  } catch (err) {
    throw new StepFailed(`instructions could not be rendered: ${(err as Error).message}`);
  }
  if (step.showWholeChainState)
    instructions += `\n\nThe chain's state so far:\n${JSON.stringify(state, null, 1)}`;
  await credit;
  const about = [step.name, step.description].filter(Boolean).join(': ');
  const answer = answerStep(
    deps.llm,
    {
      model: deps.chains.model,
      reasoning: step.reasoning,
      messages: [
        {
          role: 'system',
          content: about ? `${chain.llmInstructions}\n\nThis step: ${about}` : chain.llmInstructions,
        },
        { role: 'user', content: instructions },
      ],
      tools: tools.tools,
      toolChoice: step.toolChoice ?? null,
      outputSchemaJson: step.outputSchemaJson ?? null,
    },
    (call) => tools.run(call),
    attempt,
  );
  try {
    return await answer;
  } catch (err) {
    // Calls made before the step failed (answers that never fit its schema) were made: they are paid for.
    const spent = spentBefore(err);
    if (spent) await billing.billFailed(input, spent.usage);
    throw err;
  }
}
