import type { ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import type { TestEnv } from './env';
import { eventually } from './wait';
import { childProcessEnv, spawnEntry, stopProcess } from './worker-process';

export interface ApiProcess {
  /** http://127.0.0.1:<port> of this replica (HTTP and socket.io) */
  url: string;
  child: ChildProcess;
  /** SIGTERM (the server's own shutdown), then waits for the exit. */
  stop: () => Promise<void>;
}

/** A loopback port free right now (the OS picks it; the replica binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The real API entry point (api/server.ts) as its own process — one replica of a scaled-out API — on the test
 * stack's database, Temporal, Redis and S3 and the test env's task queue. Resolves once `/healthz` answers 200.
 */
export async function startApiProcess(env: TestEnv, extraEnv: NodeJS.ProcessEnv = {}): Promise<ApiProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawnEntry('api/server.ts', {
    ...childProcessEnv(env),
    PORT: String(port),
    PUBLIC_BASE_URL: url,
    ...extraEnv,
  });
  await untilHealthy(url, child);
  return { url, child, stop: () => stopProcess(child) };
}

/** Resolves once `<url>/healthz` answers 200; rejects (and kills the child) if it exits or is not up in 2 min. */
export async function untilHealthy(url: string, child: ChildProcess): Promise<void> {
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`api process exited with ${code}`))),
  );
  try {
    await Promise.race([
      eventually(async () => (await fetch(`${url}/healthz`)).status === 200, 120_000),
      exited,
    ]);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}
