import type { Tenants } from '@lib/db/tenants';
import type { EmailAgentsStore } from './store';

/** An agent's mail records go with it: lib/agents removes each dependent of a deleted agent through its owner. */
export const agentMail = (repos: Tenants<EmailAgentsStore>) => ({
  removeForAgent: (organizationId: string, agentId: string) =>
    repos.tenant(organizationId).emailMessages.removeForAgent(agentId),
});
