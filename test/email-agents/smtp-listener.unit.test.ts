import { expect } from 'chai';
import type { MailRoute } from '@lib/email-agents/email-intake';
import {
  agentAddress,
  client,
  codeOf,
  fakeIntake,
  logSink,
  mail,
  replyOf,
  route,
  selfSigned,
  withListener,
} from './smtp-kit';

describe('the inbound SMTP listener', () => {
  it('hands a message for an agent to the intake and refuses unknown recipients with 550', async () => {
    const { intake, accepted } = fakeIntake();
    await withListener({}, intake, async (port) => {
      expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
      expect(await replyOf(client(port).sendMail({ ...mail, to: 'nobody@agents.example.test' }))).to.equal(
        '550 5.1.1 No such mailbox',
      );
    });
    expect(accepted).to.have.length(1);
    expect(accepted[0]!.route).to.deep.equal(route);
    expect(accepted[0]!.from).to.equal('member@example.test');
    expect(accepted[0]!.raw).to.contain('hello');
  });

  it('hands over the envelope sender (MAIL FROM), not the From header: the sender check compares the two', async () => {
    const { intake, accepted } = fakeIntake();
    await withListener({}, intake, async (port) => {
      const forged = { ...mail, envelope: { from: 'attacker@elsewhere.test', to: mail.to } };
      expect(await codeOf(client(port).sendMail(forged))).to.equal(250);
    });
    expect(accepted.map((a) => a.from)).to.deep.equal(['attacker@elsewhere.test']);
    expect(accepted[0]!.raw).to.contain('From: member@example.test');
  });

  it('acknowledges nothing it could not store (451, the sender retries) and refuses oversized mail (552)', async () => {
    await withListener({}, fakeIntake({ fail: true }).intake, async (port) => {
      expect(await replyOf(client(port).sendMail(mail))).to.equal(
        '451 4.3.0 Temporary failure, try again later',
      );
    });
    const { intake, accepted } = fakeIntake();
    await withListener({ maxBytes: 1000 }, intake, async (port) => {
      expect(await replyOf(client(port).sendMail({ ...mail, text: 'x'.repeat(5000) }))).to.equal(
        '552 5.3.4 Message larger than 1000 bytes',
      );
    });
    expect(accepted).to.deep.equal([]);
  });

  it('offers STARTTLS only when a key and certificate are configured, and presents that certificate', async () => {
    const tls = selfSigned();
    // The client trusts only the configured certificate: the library's built-in one would fail the handshake.
    const requireTls = { requireTLS: true, tls: { ca: [tls.cert], servername: 'localhost' } };
    const { intake, accepted } = fakeIntake();
    await withListener({ tls }, intake, async (port) => {
      expect(await codeOf(client(port, requireTls).sendMail(mail))).to.equal(250);
    });
    expect(accepted).to.have.length(1);
    await withListener({}, intake, async (port) => {
      expect(await codeOf(client(port, requireTls).sendMail(mail))).to.not.equal(250);
    });
  });
});

describe('the inbound SMTP listener: recipients', () => {
  const routes: Record<string, MailRoute> = {
    'a@agents.example.test': { organizationId: 'org_1', agentId: 'agt_1' },
    'a.alias@agents.example.test': { organizationId: 'org_1', agentId: 'agt_1' },
    'b@agents.example.test': { organizationId: 'org_1', agentId: 'agt_2' },
    'c@agents.example.test': { organizationId: 'org_2', agentId: 'agt_1' },
  };

  it('hands a message to each distinct agent of its recipients once', async () => {
    const { intake, accepted } = fakeIntake({ route: (address) => Promise.resolve(routes[address] ?? null) });
    await withListener({}, intake, async (port) => {
      expect(await codeOf(client(port).sendMail({ ...mail, to: Object.keys(routes) }))).to.equal(250);
    });
    expect(accepted.map((a) => a.route)).to.deep.equal([
      { organizationId: 'org_1', agentId: 'agt_1' },
      { organizationId: 'org_1', agentId: 'agt_2' },
      { organizationId: 'org_2', agentId: 'agt_1' },
    ]);
  });

  it('skips a recipient whose address no agent holds any more when the message arrives', async () => {
    let lookups = 0;
    const { intake, accepted } = fakeIntake({
      // Held at RCPT TO (the first lookup), released before the message's end.
      route: () => Promise.resolve(lookups++ === 0 ? route : null),
    });
    await withListener({}, intake, async (port) => {
      expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
    });
    expect(accepted).to.deep.equal([]);
  });

  it('takes 50 recipients of a message and refuses the rest with 452 (RFC 5321 section 4.5.3.1.8)', async () => {
    const { intake, accepted } = fakeIntake({
      route: (address) => Promise.resolve({ organizationId: 'org_1', agentId: address.split('@')[0]! }),
    });
    const to = Array.from({ length: 51 }, (_, i) => `agent-${i}@agents.example.test`);
    await withListener({}, intake, async (port) => {
      const info = await client(port).sendMail({ ...mail, to });
      expect(info.rejected).to.deep.equal(['agent-50@agents.example.test']);
      expect(
        (info as { rejectedErrors?: Array<{ response: string }> }).rejectedErrors?.[0]?.response,
      ).to.equal('452 4.5.3 Too many recipients');
    });
    expect(accepted).to.have.length(50);
  });

  it('answers 451 while recipients cannot be looked up, and logs why', async () => {
    const { intake, accepted } = fakeIntake({ route: () => Promise.reject(new Error('database down')) });
    const log = logSink();
    await withListener(
      {},
      intake,
      async (port) => {
        expect(await replyOf(client(port).sendMail(mail))).to.equal(
          '451 4.3.0 Temporary failure, try again later',
        );
      },
      log.logger,
    );
    expect(accepted).to.deep.equal([]);
    const warned = log.lines.filter((l) => l.level === 40);
    expect(warned.map((l) => [l.msg, (l.err as { message?: string } | undefined)?.message])).to.deep.equal([
      ['inbound mail: recipient lookup failed', 'database down'],
    ]);
  });
});

describe('the inbound SMTP listener: its log', () => {
  it('logs each accepted message with its agent and workflow, never its addresses', async () => {
    const log = logSink();
    await withListener(
      {},
      fakeIntake().intake,
      async (port) => {
        expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
      },
      log.logger,
    );
    const lines = log.lines.filter((l) => l.msg === 'inbound mail');
    expect(lines.map((l) => [l.level, l.organizationId, l.agentId, l.workflowId, l.duplicate])).to.deep.equal(
      [[30, 'org_1', 'agt_1', 'wf-agt_1', false]],
    );
    expect(JSON.stringify(log.lines)).to.not.contain(agentAddress).and.not.contain('member@example.test');
  });

  it('logs why a message could not be stored', async () => {
    const log = logSink();
    await withListener(
      {},
      fakeIntake({ fail: true }).intake,
      async (port) => {
        expect(await codeOf(client(port).sendMail(mail))).to.equal(451);
      },
      log.logger,
    );
    const warned = log.lines.filter((l) => l.level === 40);
    expect(warned.map((l) => [l.msg, (l.err as { message?: string } | undefined)?.message])).to.deep.equal([
      ['inbound mail could not be stored', 'object store down'],
    ]);
  });
});
