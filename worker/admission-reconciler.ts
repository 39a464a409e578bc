import { reconcileAdmission } from '@lib/admission/reconcile';
import type { Deps } from '@lib/deps';

/**
 * Every ADMISSION_RECONCILE_INTERVAL_MS, one worker process of the deployment (a Redis lock) frees the admission
 * slots of executions that ended without the worker hearing of it (lib/admission/reconcile.ts).
 */
export function startAdmissionReconciler(deps: Pick<Deps, 'redis' | 'temporal' | 'logger' | 'config'>) {
  const every = deps.config.admission.reconcileIntervalMs;
  const logger = deps.logger.child({ feature: 'admission' });
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    sweeping = reconcileAdmission(deps.redis, deps.temporal, logger, { lockMs: every - 500 }).catch(
      (err: unknown) => logger.warn({ err }, 'admission reconcile failed'),
    );
  }, every);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return sweeping;
    },
  };
}
