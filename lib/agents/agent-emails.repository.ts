import type { Database } from '@lib/db/connection';
import { isDuplicateKey } from '@lib/db/duplicate-key';
import { agentEmailModel, type AgentEmailDoc } from './agent-email.schema';
import { agentModel, type AgentDoc } from './agent.schema';

/**
 * Agents' inbound addresses, across organizations: an address routes mail, so it may belong to one agent
 * anywhere. The only agent reads and writes not scoped to one organization.
 */
export class AgentEmailsCrossOrg {
  constructor(private readonly db: Database) {}

  /** The agent that owns an inbound address, in any organization (agents saved before claims existed). */
  findAgentByEmailCrossOrg(emailAddress: string) {
    return this.db
      .model(agentModel)
      .findOne({ emailAddressKey: emailAddress.toLowerCase() })
      .lean<AgentDoc>();
  }

  /**
   * Claims an inbound address for an agent; false when another agent holds it (the claim is the insert of its
   * key, atomic on the primary key).
   */
  async claimAgentEmailCrossOrg(
    address: string,
    organizationId: string,
    agentDocId: string,
  ): Promise<boolean> {
    const model = this.db.model(agentEmailModel);
    const _id = address.toLowerCase();
    try {
      await model.create({ _id, organizationId, agentDocId });
      return true;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await model.findById(_id).lean<AgentEmailDoc>())?.agentDocId === agentDocId;
    }
  }

  /** Who holds an inbound address (organization and agentDocId), or null: routes inbound mail by primary key. */
  findAgentEmailCrossOrg(address: string) {
    return this.db.model(agentEmailModel).findById(address.toLowerCase()).lean<AgentEmailDoc>();
  }

  /** Whether an agent holds the address (a person's account may not have it). */
  async isAgentEmailCrossOrg(address: string): Promise<boolean> {
    return Boolean(await this.db.model(agentEmailModel).exists({ _id: address.toLowerCase() }));
  }

  /** Gives an address up, if this agent holds it. */
  async releaseAgentEmailCrossOrg(address: string, agentDocId: string) {
    await this.db.model(agentEmailModel).deleteOne({ _id: address.toLowerCase(), agentDocId });
  }
}
