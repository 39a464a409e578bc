import type { AnalysesRepository } from './analyses.repository';

/** The analyses feature's own collection, for one organization. */
export interface AnalysesStore {
  analyses: AnalysesRepository;
}
