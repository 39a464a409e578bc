import { readFileSync } from 'node:fs';
import type { Deps } from '@lib/deps';
import { EmailIntake } from './email-intake';
import { startSmtpListener } from './smtp-listener';

/** Starts the inbound SMTP listener from config (INBOUND_SMTP_*); `port` overrides it (tests use 0). */
export function startInboundMail(
  deps: Pick<Deps, 'config' | 'repos' | 'objects' | 'temporal' | 'logger'>,
  port = deps.config.inboundEmail.port,
) {
  const settings = deps.config.inboundEmail;
  if (port === undefined) throw new Error('INBOUND_SMTP_PORT is not set');
  const intake = new EmailIntake(
    deps.repos.agentEmails,
    deps.objects,
    deps.temporal,
    deps.config.agentEmailDomains,
  );
  const tls = settings.tls
    ? { key: readFileSync(settings.tls.keyFile), cert: readFileSync(settings.tls.certFile) }
    : undefined;
  return startSmtpListener(
    { host: settings.host, port, maxBytes: settings.maxBytes, tls },
    intake,
    deps.logger.child({ feature: 'email-agents' }),
  );
}
