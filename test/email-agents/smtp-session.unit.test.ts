import { expect } from 'chai';
import tls from 'node:tls';
import { startSmtpListener } from '@lib/email-agents/smtp-listener';
import { createLogger } from '@lib/logger';
import {
  client,
  codeOf,
  connect,
  fakeIntake,
  logSink,
  mail,
  selfSigned,
  session,
  withListener,
} from './smtp-kit';

describe('the inbound SMTP listener: the session', () => {
  it('greets as agent-workspace and offers neither AUTH nor STARTTLS without a certificate (AUTH is no command here)', async () => {
    await withListener({}, fakeIntake().intake, async (port) => {
      const socket = await connect(port);
      const smtp = session(socket);
      expect(await smtp.reply()).to.equal('220 agent-workspace ESMTP Agent Workspace mail intake');
      const ehlo = await smtp.command('EHLO client.example.test');
      expect(ehlo.split('\r\n')[0]).to.match(/^250-agent-workspace /);
      expect(ehlo).to.contain('SIZE 10000').and.not.contain('AUTH').and.not.contain('STARTTLS');
      expect(await smtp.command('AUTH PLAIN AGFubgBzZWNyZXQ=')).to.match(/^500 /);
      socket.destroy();
    });
  });

  it('after STARTTLS, with the configured certificate, still offers no AUTH', async () => {
    const pem = selfSigned();
    await withListener({ tls: pem }, fakeIntake().intake, async (port) => {
      const plain = await connect(port);
      const smtp = session(plain);
      await smtp.reply();
      expect(await smtp.command('EHLO client.example.test')).to.contain('STARTTLS');
      expect(await smtp.command('STARTTLS')).to.match(/^220 /);
      plain.removeAllListeners('data');
      const secure = await new Promise<tls.TLSSocket>((resolve, reject) => {
        const s = tls.connect({ socket: plain, ca: [pem.cert], servername: 'localhost' }, () => resolve(s));
        s.once('error', reject);
      });
      const smtps = session(secure);
      const ehlo = await smtps.command('EHLO client.example.test');
      expect(ehlo.split('\r\n')[0]).to.match(/^250-agent-workspace /);
      expect(ehlo).to.not.contain('AUTH');
      expect(await smtps.command('AUTH PLAIN AGFubgBzZWNyZXQ=')).to.match(/^500 /);
      secure.destroy();
    });
  });

  it('logs a failed TLS handshake as a listener error and goes on taking mail', async () => {
    const log = logSink();
    const { intake, accepted } = fakeIntake();
    await withListener(
      { tls: selfSigned() },
      intake,
      async (port) => {
        const socket = await connect(port);
        const smtp = session(socket);
        await smtp.reply();
        await smtp.command('EHLO client.example.test');
        expect(await smtp.command('STARTTLS')).to.match(/^220 /);
        const closed = new Promise((resolve) => socket.once('close', resolve));
        socket.write('this is not a TLS ClientHello\r\n\r\n');
        await closed;
        expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
      },
      log.logger,
    );
    expect(accepted).to.have.length(1);
    const errors = log.lines.filter((l) => l.msg === 'inbound SMTP listener error');
    expect(errors).to.not.be.empty;
    for (const error of errors) {
      expect(error.level).to.equal(40);
      expect(error.err).to.have.property('message').that.is.a('string').and.not.empty;
    }
  });

  it('fails to start on a port that is taken, and takes no connection once closed', async () => {
    const { intake } = fakeIntake();
    const settings = { host: '127.0.0.1', port: 0, maxBytes: 10_000 };
    const first = await startSmtpListener(settings, intake, createLogger('silent'));
    const taken = await startSmtpListener(
      { ...settings, port: first.port },
      intake,
      createLogger('silent'),
    ).then(
      () => null,
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(taken).to.equal('EADDRINUSE');
    await first.close();
    const refused = await connect(first.port).then(
      (socket) => {
        socket.destroy();
        return null;
      },
      (err: NodeJS.ErrnoException) => err.code,
    );
    expect(refused).to.equal('ECONNREFUSED');
  });

  it('keeps the SMTP conversation, with its addresses, out of the process output', async () => {
    const printed: unknown[][] = [];
    const print = console.log;
    console.log = (...args: unknown[]) => printed.push(args);
    try {
      await withListener({}, fakeIntake().intake, async (port) => {
        expect(await codeOf(client(port).sendMail(mail))).to.equal(250);
      });
    } finally {
      console.log = print;
    }
    expect(printed).to.deep.equal([]);
  });
});
