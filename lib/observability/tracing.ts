import { trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';

/**
 * OpenTelemetry tracing of one process: the provider (registered globally, with the AsyncLocalStorage context
 * manager and W3C trace-context propagation the Temporal interceptors use), the tracer our HTTP spans and the
 * interceptors use, the span processor and resource the worker hands its workflow span sink, and the Temporal
 * client interceptor that carries a start's trace context to the workflow.
 *
 * The API loads the OpenTelemetry SDK and Temporal's interceptors only through this module, which lib/deps.ts
 * loads only when tracing is on: together they hold about 6 MB of heap that the API has no use for without it.
 */
export interface Tracing {
  tracer: Tracer;
  workflowClientInterceptor: WorkflowClientInterceptor;
  spanProcessor: SpanProcessor;
  resource: Resource;
  shutdown(): Promise<void>;
}

/**
 * Starts tracing with `spanProcessor` (tests pass an in-memory one). Call at most once per process: the
 * global provider and context manager can be registered only once.
 */
export function startTracing(serviceName: string, spanProcessor: SpanProcessor): Tracing {
  const resource = new Resource({ 'service.name': serviceName });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  const tracer = trace.getTracer('agent-workspace');
  return {
    tracer,
    workflowClientInterceptor: new OpenTelemetryWorkflowClientInterceptor({ tracer }),
    spanProcessor,
    resource,
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Tracing as configured (lib/deps.ts calls this only when OTEL_EXPORTER_OTLP_ENDPOINT is set): spans exported in
 * batches over OTLP/HTTP to `<endpoint>/v1/traces` (the exporter reads OTEL_EXPORTER_OTLP_HEADERS and _TIMEOUT
 * itself). Without it there is no provider, no interceptors and no per-request work.
 */
export function tracingFromConfig(settings: { otlpEndpoint: string; serviceName: string }): Tracing {
  const url = `${settings.otlpEndpoint.replace(/\/$/, '')}/v1/traces`;
  return startTracing(settings.serviceName, new BatchSpanProcessor(new OTLPTraceExporter({ url })));
}
