import type { AppApprovalsRepository } from './app-approvals.repository';
import type { ArtifactsRepository } from './artifacts.repository';

/** The artifacts feature's own collections, for one organization. */
export interface ArtifactsStore {
  artifacts: ArtifactsRepository;
  appApprovals: AppApprovalsRepository;
}
