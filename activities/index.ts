import type { BrowserPool } from '@lib/browser-sessions/browser-pool';
import { endSessionsOf } from '@lib/browser-sessions/browser-sessions.service';
import type { Deps } from '@lib/deps';
import { createAnalysisActivities } from './analyses/runs';
import { createBrowserActivities } from './browser-sessions';
import { createCallbackActivities } from './callbacks';
import { createEmailActivities } from './email-agents';
import { createTurnActivities } from './conversations';
import { createTaskPlanActivities } from './task-plans';
import { createToolActivities } from './tools';
import { createUserActivities } from './users';
import { createChainActivities, type ChainActivityDeps } from './chains/runs';
import { createEtlActivities } from './knowledge-bases/etl';
import { createIngestionActivities } from './knowledge-bases/ingestion';
import { createMaintenanceActivities } from './knowledge-bases/maintenance';
import { createTriggerHandlerActivities } from './triggers/handlers';
import { createScheduleActivities } from './schedules';
import { createWebhookActivities } from './triggers/webhooks';
import { schedulePlan } from '@lib/schedules/fire-plan';
import { webhookPlan } from '@lib/webhooks/delivery-plan';
import { TriggerHandlers, type TriggerHandlerDeps } from '@lib/triggers/trigger-handlers';

/** What the worker's activities use of the process's dependencies (see lib/deps.ts). */
export type ActivityDeps = Pick<
  Deps,
  | 'config'
  | 'logger'
  | 'repos'
  | 'services'
  | 'llm'
  | 'mailer'
  | 'realtime'
  | 'outbound'
  | 'objects'
  | 'embedders'
  | 'vectors'
  | 'temporal'
>;

/** What the chain activities use: tests build them with another run store from it. */
export function chainActivityDeps(deps: ActivityDeps, logger: ActivityDeps['logger']): ChainActivityDeps {
  return {
    repos: deps.repos,
    llm: deps.llm,
    logger,
    chains: deps.config.chains,
    runs: deps.services.chainRuns,
    taskPlans: deps.services.taskPlans,
    credits: deps.services.credits,
    artifacts: deps.services.toolArtifacts,
    tables: deps.services.tables,
    outbound: deps.outbound,
    browserSessions: deps.services.browserSessions,
    knowledge: deps.services.kbSearch,
    temporal: deps.temporal,
    agents: deps.services.agents,
    knowledgeBases: deps.services.knowledgeBases,
    runSessions: {
      endFor: (organizationId, owner) => endSessionsOf(deps.repos, deps.temporal, organizationId, owner),
    },
  };
}

/** All activities; each feature gets only the dependencies it needs. */
export function createActivities(deps: ActivityDeps, browsers?: BrowserPool) {
  const logger = (feature: string) => deps.logger.child({ feature });
  const triggers: TriggerHandlerDeps = {
    repos: deps.repos,
    conversations: deps.services.conversations,
    chainRuns: deps.services.chainRuns,
    members: deps.services.users,
    logger: logger('triggers'),
    plans: { schedule: schedulePlan(deps.repos), webhook: webhookPlan(deps.repos) },
  };
  return {
    ...createUserActivities({
      mailer: deps.mailer,
      publicBaseUrl: deps.config.publicBaseUrl,
      logger: logger('users'),
    }),
    ...createTurnActivities({
      repos: deps.repos,
      agents: deps.services.agents,
      modelTools: deps.services.modelTools,
      llm: deps.llm,
      realtime: deps.realtime,
      logger: logger('conversations'),
    }),
    ...createCallbackActivities({ outbound: deps.outbound }),
    ...createTaskPlanActivities({ taskPlans: deps.services.taskPlans }),
    ...createToolActivities({
      repos: deps.repos,
      tables: deps.services.tables,
      taskPlans: deps.services.taskPlans,
      artifacts: deps.services.toolArtifacts,
      browserSessions: deps.services.browserSessions,
      knowledge: deps.services.kbSearch,
      outbound: deps.outbound,
      realtime: deps.realtime,
      logger: logger('tools'),
    }),
    ...createIngestionActivities({
      repos: deps.repos,
      objects: deps.objects,
      embedders: deps.embedders,
      vectors: deps.vectors,
      llm: deps.llm,
      logger: logger('knowledge-bases'),
      kb: deps.config.kb,
    }),
    ...createMaintenanceActivities({
      repos: deps.repos,
      objects: deps.objects,
      embedders: deps.embedders,
      vectors: deps.vectors,
      chainAttachments: deps.services.chainAttachments,
    }),
    ...createEmailActivities({
      repos: deps.repos,
      agents: deps.services.agents,
      members: deps.services.users,
      conversations: deps.services.conversations,
      access: deps.services.access,
      objects: deps.objects,
      kbFiles: deps.services.kbFiles,
      maxBytes: deps.config.inboundEmail.maxBytes,
      trustedRelays: deps.config.inboundEmail.trustedRelays,
      mailer: deps.mailer,
      logger: logger('email-agents'),
    }),
    ...createChainActivities(chainActivityDeps(deps, logger('chains'))),
    ...createEtlActivities({
      repos: deps.repos,
      members: deps.services.users,
      conversations: deps.services.conversations,
      chainRuns: deps.services.chainRuns,
      logger: logger('knowledge-bases'),
    }),
    ...createScheduleActivities({
      repos: deps.repos,
      admission: deps.services.admission,
      sync: deps.services.scheduleSync,
      logger: logger('schedules'),
    }),
    ...createTriggerHandlerActivities(triggers),
    ...createWebhookActivities({
      deliveries: deps.services.webhookDeliveries,
      handlers: new TriggerHandlers(triggers),
    }),
    ...createAnalysisActivities({
      repos: deps.repos,
      agents: deps.services.agents,
      conversations: deps.services.conversations,
      llm: deps.llm,
      logger: logger('analyses'),
      credits: deps.services.credits,
      artifacts: deps.services.toolArtifacts,
      tables: deps.services.tables,
      knowledge: deps.services.kbSearch,
    }),
    ...createBrowserActivities({
      repos: deps.repos,
      objects: deps.objects,
      logger: logger('browser'),
      browsers,
    }),
  };
}
