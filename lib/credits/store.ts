import type { CreditAccountRepository } from './credit-accounts.repository';
import type { CreditGrantsRepository } from './credit-grants.repository';
import type { LlmUsageRepository } from './llm-usage.repository';

/** The credits feature's own collections, for one organization. */
export interface CreditsStore {
  creditAccount: CreditAccountRepository;
  creditGrants: CreditGrantsRepository;
  llmUsage: LlmUsageRepository;
}
