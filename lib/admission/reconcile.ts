import type { Redis } from 'ioredis';
import type { Logger } from '@lib/logger';
import type { TemporalDeps } from '@lib/temporal/client';
import { ADMISSION_KINDS, KIND_WORKFLOW, type AdmissionKind } from './kinds';

/** Counted executions younger than this are left alone: their start may still be on its way to visibility. */
export const RECONCILE_GRACE_MS = 60_000;
const LOCK_KEY = 'admission:reconcile-lock';
/** An admission set's key (admissionKey): organization ids are interpolated into a visibility query. */
export const ADMISSION_KEY = /^admission:\{([A-Za-z0-9_-]+)\}:([a-z_]+)$/;

/**
 * Removes from the admission counts every execution that is not running any more, as Temporal's visibility store
 * lists them by OrganizationId and workflow type: an execution whose end the worker could not report (the worker
 * died after it ended, Redis was down, it was terminated) would otherwise hold its slot for good. One process
 * sweeps per interval (a Redis lock); returns how many slots it freed.
 */
export async function reconcileAdmission(
  redis: Redis,
  temporal: TemporalDeps,
  logger: Logger,
  opts: { graceMs?: number; lockMs?: number } = {},
): Promise<number> {
  if (opts.lockMs && (await redis.set(LOCK_KEY, '1', 'PX', opts.lockMs, 'NX')) !== 'OK') return 0;
  const before = Date.now() - (opts.graceMs ?? RECONCILE_GRACE_MS);
  let freed = 0;
  const stream = redis.scanStream({ match: 'admission:{*}:*', count: 500 });
  for await (const keys of stream as AsyncIterable<string[]>) {
    for (const key of keys) {
      const [, organizationId, kind] = ADMISSION_KEY.exec(key) ?? [];
      if (!organizationId || !ADMISSION_KINDS.includes(kind as AdmissionKind)) continue;
      const stale = await redis.zrangebyscore(key, '-inf', before);
      if (!stale.length) continue;
      const running = new Set<string>();
      const query =
        `OrganizationId = '${organizationId}' AND WorkflowType = '${KIND_WORKFLOW[kind as AdmissionKind]}' ` +
        `AND ExecutionStatus = 'Running'`;
      for await (const execution of temporal.client.workflow.list({ query }))
        running.add(execution.workflowId);
      const ended = stale.filter((id) => !running.has(id));
      if (ended.length) freed += await redis.zrem(key, ...ended);
    }
  }
  if (freed) logger.info({ freed }, 'admission slots of ended executions freed');
  return freed;
}
