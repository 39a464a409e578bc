import { expect } from 'chai';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startInboundMail } from '@lib/email-agents/listen';
import type { Logger } from '@lib/logger';
import { client, codeOf, connect, logSink, mail, selfSigned, session } from './smtp-kit';

type InboundConfig = {
  port?: number;
  host: string;
  maxBytes: number;
  tls?: { keyFile: string; certFile: string };
};

/** The listener's dependencies from config, with a database that cannot look recipients up. */
function depsWith(inboundEmail: InboundConfig, logger: Logger) {
  return {
    config: { inboundEmail, agentEmailDomains: ['agents.example.test'] },
    repos: { agentEmails: { findAgentEmailCrossOrg: () => Promise.reject(new Error('database down')) } },
    objects: {},
    temporal: {},
    logger,
  } as unknown as Parameters<typeof startInboundMail>[0];
}

describe('starting the inbound SMTP listener from config', () => {
  it('needs INBOUND_SMTP_PORT', async () => {
    const deps = depsWith({ host: '127.0.0.1', maxBytes: 1000 }, logSink().logger);
    let started: ReturnType<typeof startInboundMail> | undefined;
    expect(() => (started = startInboundMail(deps))).to.throw('INBOUND_SMTP_PORT is not set');
    await started?.then((listener) => listener.close());
  });

  it('listens with the configured size limit, key and certificate, and logs as the email-agents feature', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inbound-tls-'));
    const pem = selfSigned();
    writeFileSync(join(dir, 'key.pem'), pem.key);
    writeFileSync(join(dir, 'cert.pem'), pem.cert);
    const log = logSink();
    const tls = { keyFile: join(dir, 'key.pem'), certFile: join(dir, 'cert.pem') };
    const listener = await startInboundMail(
      depsWith({ host: '127.0.0.1', maxBytes: 4321, tls }, log.logger),
      0,
    );
    try {
      const socket = await connect(listener.port);
      const smtp = session(socket);
      await smtp.reply();
      expect(await smtp.command('EHLO client.example.test')).to.contain('SIZE 4321');
      socket.destroy();
      // Only the configured certificate is trusted; the recipient lookup then fails (451) and is logged.
      const requireTls = { requireTLS: true, tls: { ca: [pem.cert], servername: 'localhost' } };
      expect(await codeOf(client(listener.port, requireTls).sendMail(mail))).to.equal(451);
    } finally {
      await listener.close();
    }
    expect(log.lines.map((l) => [l.msg, l.feature])).to.deep.equal([
      ['inbound mail: recipient lookup failed', 'email-agents'],
    ]);
  });
});
