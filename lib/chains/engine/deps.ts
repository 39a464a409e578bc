import type OpenAI from 'openai';
import type { Config } from '@lib/config';
import type { CreditsService } from '@lib/credits/credits.service';
import type { Tenants } from '@lib/db/tenants';
import type { Logger } from '@lib/logger';
import type { ChainsStore } from '@lib/chains/store';
import type { StepBillingDeps } from './billing';
import type { StepToolDeps } from './step-tools';

/** What the chain-step engine needs of the process. */
export interface ChainEngineDeps extends StepToolDeps, StepBillingDeps {
  repos: Tenants<ChainsStore>;
  llm: OpenAI;
  logger: Logger;
  chains: Config['chains'];
  /** Model calls of steps are paid with the organization's credits. */
  credits: Pick<CreditsService, 'balance' | 'requireCredits' | 'recordUsage'>;
  /** The browser sessions feature (below the chains): a run's sessions end with it. */
  runSessions: {
    endFor(
      organizationId: string,
      owner: { type: 'chain_run'; actionChainId: string; runId: string },
    ): Promise<void>;
  };
}
