/**
 * Child-process entry of bench/api-read.ts for the baseline (bench/lib/read-baseline.ts): serves it on an
 * ephemeral loopback port, sends that port to the parent over IPC, and stops on SIGTERM. It imports only the
 * baseline's code, so its RSS does not include the API's modules.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@lib/config';
import { createBaselineApp } from './read-baseline';

async function serve(): Promise<void> {
  const baseline = await createBaselineApp(loadConfig().mongodbUri);
  // Node's default keep-alive timeout, as the API's server has.
  const server = createServer(baseline.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = () => {
    server.closeAllConnections();
    server.close();
    void baseline.close().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  // The parent died (error, Ctrl-C): do not outlive it.
  process.once('disconnect', stop);
  process.send?.({ port: (server.address() as AddressInfo).port });
}

serve().catch((err) => {
  console.error(err);
  process.exit(1);
});
