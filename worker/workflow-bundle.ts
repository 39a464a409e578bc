import { join } from 'node:path';
import type { BundleOptions } from '@temporalio/worker';

/** workflows/, the barrel the worker bundles (source under tsx, compiled JS under dist/). */
export const workflowsPath = require.resolve('../workflows');

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
