import type { Deps } from '@lib/deps';
import { createCallbackActivities } from './callbacks';
import { createTurnActivities } from './conversations';
import { createToolActivities } from './tools';
import { createUserActivities } from './users';

/** What the worker's activities use of the process's dependencies (see lib/deps.ts). */
export type ActivityDeps = Pick<
  Deps,
  'config' | 'logger' | 'repos' | 'services' | 'llm' | 'mailer' | 'realtime' | 'outbound'
>;

/** All activities; each feature gets only the dependencies it needs. */
export function createActivities(deps: ActivityDeps) {
  const logger = (feature: string) => deps.logger.child({ feature });
  return {
    ...createUserActivities({
      mailer: deps.mailer,
      publicBaseUrl: deps.config.publicBaseUrl,
      logger: logger('users'),
    }),
    ...createTurnActivities({
      repos: deps.repos,
      llm: deps.llm,
      realtime: deps.realtime,
      logger: logger('conversations'),
    }),
    ...createCallbackActivities({ outbound: deps.outbound }),
    ...createToolActivities({
      repos: deps.repos,
      tables: deps.services.tables,
      outbound: deps.outbound,
      realtime: deps.realtime,
      logger: logger('tools'),
    }),
  };
}
