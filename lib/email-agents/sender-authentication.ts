import { domainOf } from '@lib/agents/agent-email-domains';
import { trustedDmarcPass } from './authentication-results';
import type { InboundMail } from './parse-mail';

/**
 * Whether the From address of a mail is its sender's, before the mail may act as a member: anyone can write
 * any From. With trusted relays (INBOUND_TRUSTED_RELAYS), a relay's DMARC pass for the From domain; without,
 * an SMTP envelope sender equal to From (the weaker check: it stops a forged header, not a forged envelope).
 * Returns why the sender is not authenticated, or null when they are.
 */
export function unauthenticatedSender(
  mail: Pick<InboundMail, 'fromAddress' | 'fromCount' | 'headerValues'>,
  envelopeFrom: string,
  trustedRelays: readonly string[],
): string | null {
  if (!mail.fromAddress) return 'the mail has no From address';
  // DMARC authenticates one From domain; a second From address would ride on the first one's result.
  if (mail.fromCount > 1) return 'the From header names more than one address';
  if (trustedRelays.length) {
    const dmarc = trustedDmarcPass(
      mail.headerValues('authentication-results'),
      trustedRelays,
      domainOf(mail.fromAddress),
    );
    return dmarc.pass ? null : `the sender is not authenticated: ${dmarc.reason}`;
  }
  if (envelopeFrom.toLowerCase() !== mail.fromAddress)
    return 'the sender is not authenticated: the envelope sender (MAIL FROM) is not the From address';
  return null;
}
