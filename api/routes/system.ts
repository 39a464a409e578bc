import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { checkHealth } from '@lib/health';

export function systemRouter(deps: Deps): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    const health = await checkHealth(deps);
    res.status(health.status === 'ok' ? 200 : 503).json({
      status: health.status,
      checks: health.checks,
      ...(health.failing.length ? { failing: health.failing } : {}),
    });
  });
  return router;
}
