import type { ChainRunsRepository } from './chain-runs.repository';
import type { ChainsRepository } from './chains.repository';
import type { ChainAttachmentsRepository } from './step-attachments.repository';

/** The chains feature's own collections, for one organization. */
export interface ChainsStore {
  chains: ChainsRepository;
  chainAttachments: ChainAttachmentsRepository;
  chainRuns: ChainRunsRepository;
}
