import { HeadBucketCommand } from '@aws-sdk/client-s3';
import type { Deps } from './deps';

type CheckName = 'mongo' | 'temporal' | 's3' | 'redis';
type CheckResult = { status: 'ok' } | { status: 'error'; error: string };

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Probes every backing service in parallel; one slow part cannot stall the others. */
export async function checkHealth(deps: Deps, timeoutMs = 3000) {
  const probes: Record<CheckName, () => Promise<unknown>> = {
    mongo: () => deps.db.ping(),
    temporal: () => deps.temporal.connection.workflowService.getSystemInfo({}),
    s3: () => deps.s3.send(new HeadBucketCommand({ Bucket: deps.config.s3.bucket })),
    redis: async () => {
      if (deps.redis.status === 'wait') await deps.redis.connect();
      return deps.redis.ping();
    },
  };
  const names = Object.keys(probes) as CheckName[];
  const results = await Promise.all(
    names.map(async (name): Promise<CheckResult> => {
      try {
        await withTimeout(probes[name](), timeoutMs);
        return { status: 'ok' };
      } catch (err) {
        return { status: 'error', error: (err as Error).message || (err as Error).name || 'unreachable' };
      }
    }),
  );
  const checks = Object.fromEntries(names.map((n, i) => [n, results[i]])) as Record<CheckName, CheckResult>;
  const failing = names.filter((n) => checks[n].status !== 'ok');
  return { status: failing.length ? ('error' as const) : ('ok' as const), checks, failing };
}
