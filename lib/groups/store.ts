import type { GroupAgentsRepository } from './group-agents.repository';
import type { GroupsRepository } from './groups.repository';

/** The groups feature's own collections, for one organization. */
export interface GroupsStore {
  groups: GroupsRepository;
  groupAgents: GroupAgentsRepository;
}
