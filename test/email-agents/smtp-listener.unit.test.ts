import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { EmailIntake, MailRoute } from '@lib/email-agents/email-intake';
import { startSmtpListener, type SmtpListenerSettings } from '@lib/email-agents/smtp-listener';
import { createLogger } from '@lib/logger';

const route: MailRoute = { organizationId: 'org_1', agentId: 'agt_1' };

/** An intake that knows one address and records (or refuses) what it is handed. */
function fakeIntake(fail = false) {
  const accepted: Array<{ route: MailRoute; raw: string; from: string }> = [];
  const intake = {
    route: (address: string) => Promise.resolve(address === 'agent@agents.example.test' ? route : null),
    accept: (r: MailRoute, raw: Uint8Array, from: string) => {
      if (fail) return Promise.reject(new Error('object store down'));
      accepted.push({ route: r, raw: Buffer.from(raw).toString('utf8'), from });
      return Promise.resolve({ workflowId: 'w', duplicate: false });
    },
  };
  return { intake: intake as unknown as EmailIntake, accepted };
}

async function withListener(
  settings: Partial<SmtpListenerSettings>,
  intake: EmailIntake,
  run: (port: number) => Promise<void>,
) {
  const listener = await startSmtpListener(
    { host: '127.0.0.1', port: 0, maxBytes: 10_000, ...settings },
    intake,
    createLogger('silent'),
  );
  try {
    await run(listener.port);
  } finally {
    await listener.close();
  }
}

const client = (port: number, tls: object = { ignoreTLS: true }) =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ...tls });
const mail = { from: 'member@example.test', to: 'agent@agents.example.test', subject: 's', text: 'hello' };
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 250,
    (err: { responseCode?: number }) => err.responseCode,
  );

describe('the inbound SMTP listener', () => {
  it('hands a message for an agent to the intake and refuses unknown recipients with 550', async () => {
    const { intake, accepted } = fakeIntake();
    await withListener({}, intake, async (port) => {
      expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
      expect(await codeOf(client(port).sendMail({ ...mail, to: 'nobody@agents.example.test' }))).to.equal(
        550,
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
    await withListener({}, fakeIntake(true).intake, async (port) => {
      expect(await codeOf(client(port).sendMail(mail))).to.equal(451);
    });
    const { intake, accepted } = fakeIntake();
    await withListener({ maxBytes: 1000 }, intake, async (port) => {
      expect(await codeOf(client(port).sendMail({ ...mail, text: 'x'.repeat(5000) }))).to.equal(552);
    });
    expect(accepted).to.deep.equal([]);
  });

  it('offers STARTTLS only when a key and certificate are configured', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smtp-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const tls = { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
    const requireTls = { requireTLS: true, tls: { rejectUnauthorized: false } };
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
