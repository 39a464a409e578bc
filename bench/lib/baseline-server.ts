/**
 * Child-process entry of bench/api-read.ts: `bench-server.ts api|baseline` serves one app on an ephemeral
 * loopback port and talks to the parent over IPC. Each mode imports only its own code, so the baseline's
 * RSS does not include the API's modules.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '@lib/config';

export type ServerMode = 'api' | 'baseline';
export type ToChild = { type: 'cpu' } | { type: 'stop' };
export type FromChild =
  | { type: 'ready'; port: number; rssMb: number }
  | { type: 'cpu'; userMs: number; systemMs: number }
  | { type: 'stats'; peakRssMb: number; maxRssMb: number; heapAtPeakMb: number; externalAtPeakMb: number };

const MB = 2 ** 20;
const ROOT = join(__dirname, '..', '..');

async function createHandler(mode: ServerMode) {
  // Response validation is a test-only setting; production runs without it.
  const config = loadConfig({ ...process.env, VALIDATE_RESPONSES: 'false' });
  if (mode === 'api') {
    // The API as it ships: the build in dist/ (bench/run.mjs builds it first), not the sources through tsx,
    // whose compiled-module cache alone adds about 45 MB of RSS.
    const load = <T>(path: string) => import(join(ROOT, 'dist', path)) as Promise<T>;
    const [{ createApp }, { closeDeps, createDeps }, { createLogger }] = await Promise.all([
      load<typeof import('@api/app')>('api/app'),
      load<typeof import('@lib/deps')>('lib/deps'),
      load<typeof import('@lib/logger')>('lib/logger'),
    ]);
    const deps = await createDeps(config, { logger: createLogger(process.env.BENCH_LOG_LEVEL ?? 'silent') });
    return { handler: createApp(deps), close: () => closeDeps(deps) };
  }
  const { createBaselineApp } = await import('./read-baseline');
  const baseline = await createBaselineApp(config.mongodbUri);
  return { handler: baseline.app, close: baseline.close };
}

async function serve(mode: ServerMode): Promise<void> {
  const { handler, close } = await createHandler(mode);
  const server = createServer(handler);
  // Each server idles while the other is measured: keep its client sockets open across that gap, for both.
  server.keepAliveTimeout = 120_000;
  let peak = process.memoryUsage();
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    if (now.rss > peak.rss) peak = now;
  }, 50);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const send = (m: FromChild) => process.send?.(m);
  process.on('message', (msg: ToChild) => {
    if (msg.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      send({ type: 'cpu', userMs: user / 1000, systemMs: system / 1000 });
    } else if (msg.type === 'stop') {
      clearInterval(sampler);
      send({
        type: 'stats',
        peakRssMb: peak.rss / MB,
        maxRssMb: process.resourceUsage().maxRSS / 1024,
        heapAtPeakMb: peak.heapTotal / MB,
        externalAtPeakMb: peak.external / MB,
      });
      server.closeAllConnections();
      server.close();
      void close().finally(() => process.exit(0));
    }
  });
  // The parent died (error, Ctrl-C): do not outlive it.
  process.once('disconnect', () => process.exit(0));
  send({
    type: 'ready',
    port: (server.address() as AddressInfo).port,
    rssMb: process.memoryUsage().rss / MB,
  });
}

serve(process.argv[2] === 'api' ? 'api' : 'baseline').catch((err) => {
  console.error(err);
  process.exit(1);
});
