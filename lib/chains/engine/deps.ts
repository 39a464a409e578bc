import type OpenAI from 'openai';
import type { Config } from '@lib/config';
import type { CreditsService } from '@lib/credits/credits.service';
import type { Logger } from '@lib/logger';
import type { Repositories } from '@lib/repositories';
import type { StepBillingDeps } from './billing';
import type { StepToolDeps } from './step-tools';

/** What the chain-step engine needs of the process. */
export interface ChainEngineDeps extends StepToolDeps, StepBillingDeps {
  repos: Repositories;
  llm: OpenAI;
  logger: Logger;
  chains: Config['chains'];
  /** Model calls of steps are paid with the organization's credits. */
  credits: Pick<CreditsService, 'balance' | 'requireCredits' | 'recordUsage'>;
}
