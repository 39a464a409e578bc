import type { Database } from '@lib/db/connection';
import { ConflictError } from '@lib/errors';
import { findOrCreate } from '@lib/db/duplicate-key';
import { newId } from '@lib/ids';
import { userModel, type UserDoc } from './user.schema';

/** Whether an agent holds an address (lib/agents, wired in lib/repositories.ts). */
export interface AgentAddresses {
  isAgentEmailCrossOrg(address: string): Promise<boolean>;
}

/** Accounts are global identities (a person may belong to several organizations), so this repository
 * is not tenant-scoped; it never returns membership or organization data. */
export class UserAccountsRepository {
  private readonly model;

  constructor(
    db: Database,
    private readonly agentAddresses: AgentAddresses,
  ) {
    this.model = db.model(userModel);
  }

  findByEmail(email: string) {
    return this.model.findOne({ email: email.toLowerCase() }).lean<UserDoc>();
  }

  findByOidcSubject(oidcSubject: string) {
    return this.model.findOne({ oidcSubject }).lean<UserDoc>();
  }

  /** Links an OIDC identity to the account, unless the account already has one. */
  async linkOidcSubject(userId: string, oidcSubject: string) {
    await this.model.updateOne({ _id: userId, oidcSubject: null }, { $set: { oidcSubject } });
  }

  /**
   * A new account. Not with an address an agent holds: mail from that person would be taken for the agent's
   * (and the agent's for theirs), so the address stays the agent's (`409 email_address_taken`).
   */
  async create(fields: { email: string; name: string }): Promise<UserDoc> {
    if (await this.agentAddresses.isAgentEmailCrossOrg(fields.email))
      throw new ConflictError(`${fields.email} is an agent's email address`, 'email_address_taken');
    const doc = await this.model.create({ _id: newId('usr'), ...fields, email: fields.email.toLowerCase() });
    return doc.toObject();
  }

  /** Returns the account for this email, creating it when absent; `created` tells which. */
  async findOrCreate(fields: { email: string; name: string }) {
    const { doc, created } = await findOrCreate(
      () => this.findByEmail(fields.email),
      () => this.create(fields),
    );
    return { user: doc, created };
  }
}
