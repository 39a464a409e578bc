import { readFileSync } from 'node:fs';
import type { Config } from '@lib/config';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import type { Logger } from '@lib/logger';
import type { TemporalDeps } from '@lib/temporal/client';
import { EmailIntake } from './email-intake';
import type { AgentAddressBook } from './ports';
import { startSmtpListener } from './smtp-listener';

/** What the listener needs of the process's dependencies (lib/deps.ts), which sits above every feature. */
export interface InboundMailDeps {
  config: Pick<Config, 'inboundEmail' | 'agentEmailDomains'>;
  repos: { agentEmails: AgentAddressBook };
  objects: ObjectStore;
  temporal: TemporalDeps;
  logger: Logger;
}

/** Starts the inbound SMTP listener from config (INBOUND_SMTP_*); `port` overrides it (tests use 0). */
export function startInboundMail(deps: InboundMailDeps, port = deps.config.inboundEmail.port) {
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
