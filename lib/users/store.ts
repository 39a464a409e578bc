import type { MembersRepository } from './members.repository';
import type { UserAccountsRepository } from './user-accounts.repository';

/** The users feature's own collections, for one organization. */
export interface UsersStore {
  members: MembersRepository;
}

/** Accounts are global identities, not organization data: the users feature holds them beside its stores. */
export interface UserAccounts {
  accounts: UserAccountsRepository;
}
