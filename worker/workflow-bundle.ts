import { join } from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { tracingWorkflowModules } from './interceptors';

/** workflows/, the barrel the worker bundles (source under tsx, compiled JS under dist/). */
export const workflowsPath = require.resolve('../workflows');

/** Workflow interceptors every bundle has: the end of an execution frees its admission slot. */
const alwaysBundled = [require.resolve('../workflows/admission-interceptors')];

/**
 * Workflows import their contracts as `@contracts`. The compiled build has that alias rewritten to a relative
 * path (tsc-alias); bundling the TypeScript sources (tests, tsx) needs webpack told where it points.
 */
export const bundlerOptions: Pick<BundleOptions, 'webpackConfigHook'> = {
  webpackConfigHook: (config) => ({
    ...config,
    resolve: {
      ...config.resolve,
      alias: {
        ...(config.resolve?.alias as Record<string, string> | undefined),
        '@contracts': join(__dirname, '..', 'lib', 'temporal', 'contracts'),
      },
    },
  }),
};

/** The workflow code every worker of a process shares (bundling takes seconds; do it once); with tracing, the
 * OpenTelemetry workflow interceptors too. */
export function bundleWorkflows(opts: { tracing?: boolean; logger?: BundleOptions['logger'] } = {}) {
  return bundleWorkflowCode({
    workflowsPath,
    ...bundlerOptions,
    workflowInterceptorModules: [...alwaysBundled, ...(opts.tracing ? tracingWorkflowModules : [])],
    logger: opts.logger && quieter(opts.logger),
  });
}

/** The bundler's logger, its info lines (webpack's list of every module it packed) moved down to debug. */
function quieter(logger: NonNullable<BundleOptions['logger']>): NonNullable<BundleOptions['logger']> {
  return {
    log: (level, message, meta) => {
      logger.log(level === 'INFO' ? 'DEBUG' : level, message, meta);
    },
    trace: (message, meta) => {
      logger.trace(message, meta);
    },
    debug: (message, meta) => {
      logger.debug(message, meta);
    },
    info: (message, meta) => {
      logger.debug(message, meta);
    },
    warn: (message, meta) => {
      logger.warn(message, meta);
    },
    error: (message, meta) => {
      logger.error(message, meta);
    },
  };
}
