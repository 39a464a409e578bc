import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import net from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import nodemailer from 'nodemailer';
import type { EmailIntake, MailRoute } from '@lib/email-agents/email-intake';
import { startSmtpListener, type SmtpListenerSettings } from '@lib/email-agents/smtp-listener';
import { createLogger, type Logger } from '@lib/logger';

/** The SMTP listener's unit tests: a fake intake, a listener on a free port, a client, a log to read. */

export const route: MailRoute = { organizationId: 'org_1', agentId: 'agt_1' };
export const agentAddress = 'agent@agents.example.test';

/** An intake that knows one address (or routes as told) and records (or refuses) what it is handed. */
export function fakeIntake(
  options: { fail?: boolean; route?: (address: string) => Promise<MailRoute | null> } = {},
) {
  const accepted: Array<{ route: MailRoute; raw: string; from: string }> = [];
  const intake = {
    route: options.route ?? ((address: string) => Promise.resolve(address === agentAddress ? route : null)),
    accept: (r: MailRoute, raw: Uint8Array, from: string) => {
      if (options.fail) return Promise.reject(new Error('object store down'));
      accepted.push({ route: r, raw: Buffer.from(raw).toString('utf8'), from });
      return Promise.resolve({ workflowId: `wf-${r.agentId}`, duplicate: false });
    },
  };
  return { intake: intake as unknown as EmailIntake, accepted };
}

/** A logger whose lines (parsed) the test reads. */
export function logSink() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', {}, sink), lines };
}

export async function withListener(
  settings: Partial<SmtpListenerSettings>,
  intake: EmailIntake,
  run: (port: number) => Promise<void>,
  logger: Logger = createLogger('silent'),
) {
  const listener = await startSmtpListener(
    { host: '127.0.0.1', port: 0, maxBytes: 10_000, ...settings },
    intake,
    logger,
  );
  try {
    await run(listener.port);
  } finally {
    await listener.close();
  }
}

export const client = (port: number, tls: object = { ignoreTLS: true }) =>
  nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ...tls });
export const mail = { from: 'member@example.test', to: agentAddress, subject: 's', text: 'hello' };

/** The SMTP reply a send ended with (250 when it was taken). */
export const replyOf = (p: Promise<unknown>) =>
  p.then(
    () => '250',
    (err: { response?: string }) => err.response,
  );
export const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 250,
    (err: { responseCode?: number }) => err.responseCode,
  );

/** A self-signed key and certificate for `localhost` (PEM). */
export function selfSigned() {
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
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
}

/** A raw SMTP session (RFC 5321): `reply()` is the next whole reply, multi-line ones joined by CRLF. */
export function session(socket: net.Socket) {
  let buffer = '';
  const replies: string[] = [];
  const waiting: Array<(reply: string) => void> = [];
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    for (let m = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3} [^\r\n]*\r\n/.exec(buffer); m;) {
      buffer = buffer.slice(m[0].length);
      const reply = m[0].trimEnd();
      const next = waiting.shift();
      if (next) next(reply);
      else replies.push(reply);
      m = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3} [^\r\n]*\r\n/.exec(buffer);
    }
  });
  const reply = () =>
    new Promise<string>((resolve) => {
      const r = replies.shift();
      if (r === undefined) waiting.push(resolve);
      else resolve(r);
    });
  const command = (line: string) => {
    socket.write(`${line}\r\n`);
    return reply();
  };
  return { reply, command };
}

export const connect = (port: number) =>
  new Promise<net.Socket>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
