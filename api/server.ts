// First: source maps apply only to modules loaded after this one.
import './source-maps';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { startInboundMail } from '@lib/email-agents/listen';
import { createLogger } from '@lib/logger';
import { createApp, createHttpServer } from './app';
import { attachRealtime } from './realtime';

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'api' });
  const deps = await createDeps(config, { logger });
  const server = createHttpServer(createApp(deps));
  const realtime = attachRealtime(server, deps);
  server.listen(config.port, () => logger.info({ port: config.port }, 'api listening'));
  // Inbound mail for agents' addresses, when INBOUND_SMTP_PORT is set (docs/email-agents.md).
  const mail = config.inboundEmail.port === undefined ? undefined : await startInboundMail(deps);
  if (mail) logger.info({ port: mail.port }, 'inbound SMTP listening');
  const shutdown = () => {
    logger.info('api shutting down');
    void Promise.resolve(mail?.close())
      .then(() => realtime.close())
      .then(() => closeDeps(deps))
      .then(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
