import type { Deps } from '@lib/deps';
import { ctxOf } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function creditsHandlers(deps: Deps): OperationHandlers {
  const credits = deps.services.credits;
  return {
    async getCredits(req, res) {
      const limit = req.query.usageLimit === undefined ? 20 : Number(req.query.usageLimit);
      res.json(await credits.summaryFor(ctxOf(req), limit));
    },
  };
}
