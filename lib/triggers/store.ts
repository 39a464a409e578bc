import type { HandlerRunsRepository } from './handler-runs.repository';

/** The triggers feature's own collection, for one organization: the executions of schedule and webhook handlers. */
export interface TriggersStore {
  handlerRuns: HandlerRunsRepository;
}
