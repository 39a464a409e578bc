import { CancelledFailure, CompleteAsyncError, type Context } from '@temporalio/activity';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, WorkerOptions } from '@temporalio/worker';
import { withLogContext } from '@lib/observability/log-context';
import type { Metrics } from '@lib/observability/metrics';
import type { Tracing } from '@lib/observability/tracing';

/** The workflow-side interceptors of tracing, bundled into the workflow code only when tracing is on. */
export const tracingWorkflowModules = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/**
 * Every activity attempt runs in a log context naming its workflow, run and activity type (so lines it logs
 * through the shared logger carry them), and one that throws — other than a cancellation or an async completion
 * — counts in temporal_activity_failures_total.
 */
export function observeActivities(metrics: Metrics): ActivityInterceptorsFactory {
  return (ctx: Context) => ({
    inbound: {
      async execute(input, next) {
        const { workflowExecution, activityType } = ctx.info;
        const logContext = {
          workflowId: workflowExecution?.workflowId,
          runId: workflowExecution?.runId,
          activityType,
        };
        try {
          return await withLogContext(logContext, () => next(input));
        } catch (err) {
          if (!(err instanceof CancelledFailure) && !(err instanceof CompleteAsyncError))
            metrics.activityFailures.inc({ activity_type: activityType });
          throw err;
        }
      },
    },
  });
}

/**
 * The worker options of observability: the activity interceptors always; with tracing, the OpenTelemetry
 * activity interceptors and the sink that exports workflow spans (its workflow interceptors are bundled:
 * worker/workflow-bundle.ts).
 */
export function observabilityWorkerOptions(
  metrics: Metrics,
  tracing: Tracing | undefined,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  const activity: ActivityInterceptorsFactory[] = [observeActivities(metrics)];
  if (!tracing) return { interceptors: { activity } };
  activity.unshift((ctx) => ({
    inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: tracing.tracer }),
    outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
  }));
  return {
    interceptors: { activity },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
