/** Credits per 1,000 tokens, like a model provider's price list (lib/config/: CREDITS_PER_1K_*). */
export interface CreditPricing {
  perThousandPromptTokens: number;
  perThousandCompletionTokens: number;
}

export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
}

/** A count as a model server reported it, made safe to bill: a whole number ≥ 0 (anything else is 0). */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

/**
 * What a call costs, in whole credits, rounded up: a call is never free unless its tokens (or the prices) are
 * 0, and rounding costs at most one credit per call. Integer arithmetic, so costs and balances never drift.
 */
export function creditCost(tokens: TokenCounts, pricing: CreditPricing): number {
  const weighted =
    tokens.promptTokens * pricing.perThousandPromptTokens +
    tokens.completionTokens * pricing.perThousandCompletionTokens;
  return Math.ceil(weighted / 1000);
}
