import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/**
 * The process's Prometheus metrics, in a registry of its own (not prom-client's global one), so every
 * createDeps — tests build several per process — has its own. Label values are bounded: routes are openapi
 * path templates, workflow and activity types are the code's own names; organization ids are the one label
 * that grows with the number of tenants.
 */
export function createMetrics(defaultLabels: Record<string, string> = {}) {
  const registry = new Registry();
  registry.setDefaultLabels(defaultLabels);
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, openapi route template and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from a request arriving to its response being written, by method, route template and status',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    workflowStarts: new Counter({
      name: 'temporal_workflow_starts_total',
      help: 'Workflow starts this process asked Temporal for, by workflow type and outcome',
      labelNames: ['workflow_type', 'outcome'] as const,
      registers: [registry],
    }),
    activityFailures: new Counter({
      name: 'temporal_activity_failures_total',
      help: 'Activity attempts that ended in an error (each retry counts), by activity type',
      labelNames: ['activity_type'] as const,
      registers: [registry],
    }),
    admissionAdmitted: new Counter({
      name: 'admission_admitted_total',
      help: "Background executions counted against their organization's bound, by organization and kind",
      labelNames: ['organization_id', 'kind'] as const,
      registers: [registry],
    }),
    admissionRefused: new Counter({
      name: 'admission_refused_total',
      help: 'Background work refused (429, or a schedule fire skipped) for a full backlog, by organization and the kind that was full',
      labelNames: ['organization_id', 'kind'] as const,
      registers: [registry],
    }),
    llmTokens: new Counter({
      name: 'llm_tokens_total',
      help: 'Model tokens billed, by organization and kind (prompt or completion)',
      labelNames: ['organization_id', 'kind'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
