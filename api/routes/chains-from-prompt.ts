import type { StepPromptInput } from '@lib/chains/step-from-prompt.service';
import type { Deps } from '@lib/deps';
import { body, ctxOf } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function chainsFromPromptHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.stepFromPrompt;
  return {
    async generateChainStepFromPrompt(req, res) {
      res.json(await service.generate(ctxOf(req), body<StepPromptInput>(req)));
    },
  };
}
