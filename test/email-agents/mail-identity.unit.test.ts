import { expect } from 'chai';
import type { AgentEmailDoc } from '@lib/agents/agent-email.schema';
import { checkAgentEmailDomain } from '@lib/agents/agent-email-domains';
import { loadConfig } from '@lib/config';
import { parseAuthenticationResults, trustedDmarcPass } from '@lib/email-agents/authentication-results';
import { EmailIntake } from '@lib/email-agents/email-intake';
import { unauthenticatedSender } from '@lib/email-agents/sender-authentication';
import type { TemporalDeps } from '@lib/temporal/client';

const relay = ['mx.relay.test'];

describe('Authentication-Results (RFC 8601)', () => {
  it('reads the authserv-id, each method and result, and their properties through comments and folding', () => {
    const header = parseAuthenticationResults(
      'MX.Relay.test 1; spf=pass (sender IP is 192.0.2.1) smtp.mailfrom=Example.test;\r\n' +
        '\tdkim=pass (2048-bit key; "quoted (not a comment)") header.d=example.test header.s=sel;\r\n' +
        ' dmarc = pass (p=reject; dis=none) header . from = Example.TEST',
    );
    expect(header).to.deep.equal({
      authservId: 'mx.relay.test',
      results: [
        { method: 'spf', result: 'pass', props: { 'smtp.mailfrom': 'example.test' } },
        { method: 'dkim', result: 'pass', props: { 'header.d': 'example.test', 'header.s': 'sel' } },
        { method: 'dmarc', result: 'pass', props: { 'header.from': 'example.test' } },
      ],
    });
    expect(parseAuthenticationResults('"mx.relay.test"; none')).to.deep.equal({
      authservId: 'mx.relay.test',
      results: [],
    });
    expect(parseAuthenticationResults('  ; dmarc=pass header.from=x.test')).to.equal(null);
  });

  it('counts only trusted instances with dmarc=pass for the From domain, and none that says otherwise', () => {
    const pass = 'mx.relay.test; dmarc=pass header.from=example.test';
    expect(trustedDmarcPass([pass], relay, 'example.test')).to.deep.equal({ pass: true });
    // The same word from anyone else, or about another domain, or with another result, does not count.
    for (const values of [
      ['mx.attacker.test; dmarc=pass header.from=example.test'],
      ['mx.relay.test; dmarc=pass header.from=attacker.test'],
      ['mx.relay.test; dkim=pass header.d=example.test; spf=pass smtp.mailfrom=example.test'],
      ['mx.relay.test; dmarc=pass'],
      [],
    ])
      expect(trustedDmarcPass(values, relay, 'example.test')).to.deep.equal({
        pass: false,
        reason: 'no dmarc=pass for the From domain from a trusted relay (INBOUND_TRUSTED_RELAYS)',
      });
    // A forged pass beside the relay's own fail (a relay that does not strip forged instances).
    expect(
      trustedDmarcPass([pass, 'mx.relay.test; dmarc=fail header.from=example.test'], relay, 'example.test'),
    ).to.deep.equal({ pass: false, reason: 'dmarc=fail for the From domain from a trusted relay' });
    expect(trustedDmarcPass([`${pass} ${'x'.repeat(9000)}`], relay, 'example.test').pass).to.equal(false);
    // Only the topmost instances are read: the relay's own is there, above anything the sender wrote.
    const noise = Array.from({ length: 20 }, () => 'mx.attacker.test; dmarc=none');
    expect(trustedDmarcPass([pass, ...noise], relay, 'example.test').pass).to.equal(true);
    expect(trustedDmarcPass([...noise, pass], relay, 'example.test').pass).to.equal(false);
  });
});

describe('inbound sender authentication', () => {
  const mail = (fromAddress: string | null, headers: string[] = [], fromCount = 1) => ({
    fromAddress,
    fromCount,
    headerValues: (name: string) => (name === 'authentication-results' ? headers : []),
  });
  const envelopeMismatch =
    'the sender is not authenticated: the envelope sender (MAIL FROM) is not the From address';

  it('without trusted relays, needs the envelope sender to be the From address', () => {
    expect(unauthenticatedSender(mail('member@example.test'), 'Member@Example.test', [])).to.equal(null);
    expect(unauthenticatedSender(mail('member@example.test'), 'attacker@evil.test', [])).to.equal(
      envelopeMismatch,
    );
    expect(unauthenticatedSender(mail(null), 'member@example.test', [])).to.equal(
      'the mail has no From address',
    );
    expect(unauthenticatedSender(mail('member@example.test', [], 2), 'member@example.test', [])).to.equal(
      'the From header names more than one address',
    );
  });

  it('with trusted relays, needs their dmarc=pass for the From domain, whatever the envelope', () => {
    const pass = ['mx.relay.test; dmarc=pass header.from=example.test'];
    expect(unauthenticatedSender(mail('member@example.test', pass), 'srs0=x@relay.test', relay)).to.equal(
      null,
    );
    expect(unauthenticatedSender(mail('member@example.test'), 'member@example.test', relay)).to.equal(
      'the sender is not authenticated: no dmarc=pass for the From domain from a trusted relay (INBOUND_TRUSTED_RELAYS)',
    );
  });
});

describe('agent mail domains', () => {
  it('allows agent addresses only in AGENT_EMAIL_DOMAINS (exact domain, any case), none when unset', () => {
    expect(() => checkAgentEmailDomain('desk@Agents.Example.test', ['agents.example.test'])).to.not.throw();
    for (const address of [
      'desk@example.test',
      'desk@sub.agents.example.test',
      'desk@agents.example.test.evil',
    ])
      expect(() => checkAgentEmailDomain(address, ['agents.example.test']))
        .to.throw()
        .with.property('code', 'email_domain_not_allowed');
    expect(() => checkAgentEmailDomain('desk@agents.example.test', []))
      .to.throw(/none is configured \(AGENT_EMAIL_DOMAINS\)/)
      .with.property('status', 400);
  });

  it('reads the domain lists from the environment and refuses what is not a host name', () => {
    const config = loadConfig({
      JWT_SECRET: 'x'.repeat(32),
      AGENT_EMAIL_DOMAINS: ' Agents.Example.test, mail.example.test ,',
      INBOUND_TRUSTED_RELAYS: 'MX.relay.test',
    });
    expect(config.agentEmailDomains).to.deep.equal(['agents.example.test', 'mail.example.test']);
    expect(config.inboundEmail.trustedRelays).to.deep.equal(['mx.relay.test']);
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).agentEmailDomains).to.deep.equal([]);
    expect(() => loadConfig({ JWT_SECRET: 'x'.repeat(32), AGENT_EMAIL_DOMAINS: '@example.test' })).to.throw(
      /AGENT_EMAIL_DOMAINS: '@example.test' is not a host name/,
    );
  });

  it('routes no mail to an address outside them, even one an agent holds from before', async () => {
    const claim = { organizationId: 'org_1', agentDocId: 'org_1:agt_1' } as AgentEmailDoc;
    const agentEmails = { findAgentEmailCrossOrg: () => Promise.resolve(claim) };
    const intake = new EmailIntake(agentEmails, { put: () => Promise.resolve() }, {} as TemporalDeps, [
      'agents.example.test',
    ]);
    expect(await intake.route('desk@agents.example.test')).to.deep.equal({
      organizationId: 'org_1',
      agentId: 'agt_1',
    });
    expect(await intake.route('owner@example.test')).to.equal(null);
  });
});
