import { AppError } from '@lib/errors';

/** The domain of an address, lower-cased (`Desk@Agents.Example` → `agents.example`). */
export const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Whether an address is in one of the operator's agent mail domains (AGENT_EMAIL_DOMAINS), exactly. */
export const inAgentDomains = (address: string, domains: readonly string[]) =>
  domains.includes(domainOf(address));

/**
 * An agent's address must be in a domain the operator runs for agents: anything else could be a person's
 * address (their mail to their own agents would be taken for an agent's) or a domain the relay should not
 * send as.
 */
export function checkAgentEmailDomain(address: string, domains: readonly string[]) {
  if (inAgentDomains(address, domains)) return;
  const allowed = domains.length
    ? `one of the agent mail domains: ${domains.join(', ')}`
    : 'an agent mail domain, and none is configured (AGENT_EMAIL_DOMAINS)';
  throw new AppError(400, 'email_domain_not_allowed', `emailAddress ${address} must be in ${allowed}`);
}

/** An address that is already a user account's email: no agent may take it. */
export const addressOfUser = (address: string) =>
  new AppError(409, 'email_address_taken', `emailAddress ${address} is a user account's email`);
