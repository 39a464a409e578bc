import type { Deps } from '@lib/deps';
import type { OperationHandlers } from '@api/operations';

/** GET /metrics: the process's Prometheus metrics, for the operator (the metricsToken scheme guards it). */
export function metricsHandlers(deps: Deps): OperationHandlers {
  return {
    async getMetrics(_req, res) {
      const body = await deps.metrics.registry.metrics();
      res.type('text/plain; version=0.0.4; charset=utf-8').send(body);
    },
  };
}
