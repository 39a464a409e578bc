import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
}

/**
 * A real SMTP server on loopback that records what it receives. `rejectNext(n)` makes the next n
 * deliveries fail with a temporary (451) error, as a greylisting relay would; `rejectNext(n, 550)` with a
 * permanent one, as for an unknown mailbox.
 */
export async function startSmtpReceiver() {
  const messages: ReceivedMail[] = [];
  let rejectCount = 0;
  let rejectCode = 451;
  let attempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        attempts++;
        if (rejectCount > 0) {
          rejectCount--;
          const message = rejectCode >= 500 ? 'Mailbox unavailable' : 'Greylisted, try again later';
          const err = Object.assign(new Error(message), { responseCode: rejectCode });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const subject = /^Subject: (.*)$/im.exec(raw)?.[1]?.trim() ?? '';
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    attempts: () => attempts,
    rejectNext(n: number, code = 451) {
      rejectCount = n;
      rejectCode = code;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export type SmtpReceiver = Awaited<ReturnType<typeof startSmtpReceiver>>;
