import { Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { startMetricsServer } from '@lib/observability/metrics-auth';
import { ensureScheduleReconciler } from '@lib/schedules/reconciler-schedule';
import { startAdmissionReconciler } from './admission-reconciler';
import { createWorker } from './create-worker';

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, { process: 'worker', taskQueue: config.temporal.taskQueue });
  Runtime.install({
    logger: {
      log: (level, message, meta) =>
        logger[level === 'TRACE' ? 'trace' : (level.toLowerCase() as 'info')](meta ?? {}, message),
      trace: (m, meta) => logger.trace(meta ?? {}, m),
      debug: (m, meta) => logger.debug(meta ?? {}, m),
      info: (m, meta) => logger.info(meta ?? {}, m),
      warn: (m, meta) => logger.warn(meta ?? {}, m),
      error: (m, meta) => logger.error(meta ?? {}, m),
    },
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
  const deps = await createDeps(config, { logger, process: 'worker' });
  const { workerMetricsPort, metricsToken } = config.observability;
  const metricsServer =
    workerMetricsPort === undefined
      ? undefined
      : await startMetricsServer({
          port: workerMetricsPort,
          token: metricsToken,
          registry: deps.metrics.registry,
          logger,
        });
  if (metricsServer) logger.info({ port: workerMetricsPort }, 'worker metrics listening');
  const { worker, connection } = await createWorker(config.temporal, deps);
  await ensureScheduleReconciler(deps.temporal);
  const reconciler = startAdmissionReconciler(deps);
  logger.info('worker started');
  try {
    await worker.run();
  } finally {
    await reconciler.stop();
    metricsServer?.close();
    await connection.close();
    await closeDeps(deps);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
