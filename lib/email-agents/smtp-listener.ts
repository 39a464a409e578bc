import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Logger } from '@lib/logger';
import type { EmailIntake, MailRoute } from './email-intake';

export interface SmtpListenerSettings {
  host: string;
  port: number;
  maxBytes: number;
  /** STARTTLS with this key and certificate (PEM); plain SMTP without. */
  tls?: { key: Buffer; cert: Buffer };
}

/** Recipients per message: a mail to more agents than this is refused past the limit (452, retried later). */
const MAX_RECIPIENTS = 50;

const smtpError = (code: number, message: string) =>
  Object.assign(new Error(message), { responseCode: code });

/**
 * The inbound SMTP listener for agents' addresses (smtp-server). It refuses recipients no agent holds (550,
 * during the session: the sending server reports it, we never send a bounce), takes the message, and
 * acknowledges it only once its workflow is started (451 otherwise, so the sender retries).
 */
/** The distinct agents of a message's recipients (recipients no agent holds were refused at RCPT TO). */
async function routesOf(intake: EmailIntake, addresses: string[]): Promise<MailRoute[]> {
  const found = await Promise.all(addresses.map((a) => intake.route(a)));
  const routes: MailRoute[] = [];
  for (const r of found) {
    if (r && !routes.some((x) => x.organizationId === r.organizationId && x.agentId === r.agentId))
      routes.push(r);
  }
  return routes;
}

export async function startSmtpListener(settings: SmtpListenerSettings, intake: EmailIntake, logger: Logger) {
  const options: SMTPServerOptions = {
    name: 'agent-workspace',
    banner: 'Agent Workspace mail intake',
    size: settings.maxBytes,
    authOptional: true,
    disabledCommands: settings.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(settings.tls ? { key: settings.tls.key, cert: settings.tls.cert } : {}),
    logger: false,
    onRcptTo(address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS)
        return callback(smtpError(452, '4.5.3 Too many recipients'));
      intake.route(address.address).then(
        (route) => callback(route ? undefined : smtpError(550, '5.1.1 No such mailbox')),
        (err: unknown) => {
          logger.warn({ err }, 'inbound mail: recipient lookup failed');
          callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (stream.sizeExceeded)
          return callback(smtpError(552, `5.3.4 Message larger than ${settings.maxBytes} bytes`));
        const raw = Buffer.concat(chunks);
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        routesOf(
          intake,
          session.envelope.rcptTo.map((r) => r.address),
        )
          .then((routes) =>
            Promise.all(
              routes.map(async (route) => ({ ...route, ...(await intake.accept(route, raw, from)) })),
            ),
          )
          .then(
            (accepted) => {
              for (const a of accepted) logger.info(a, 'inbound mail');
              callback();
            },
            (err: unknown) => {
              logger.warn({ err }, 'inbound mail could not be stored');
              callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
            },
          );
      });
    },
  };
  const server = new SMTPServer(options);
  server.on('error', (err) => logger.warn({ err }, 'inbound SMTP listener error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
