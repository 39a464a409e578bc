import type OpenAI from 'openai';
import type { Models } from '@lib/db/models';
import type { Mailer } from '@lib/mail';
import type { RealtimeEmitter } from '@lib/realtime/emitter';
import { loadToolConfig } from './agent-tools';
import { createCallbackActivities } from './callback';
import { createMailActivities } from './mail';
import { createToolActivities } from './tools';
import { createTurnActivities } from './turn';

export interface ActivityDeps {
  mailer: Mailer;
  publicBaseUrl: string;
  models: Models;
  llm: OpenAI;
  realtime: RealtimeEmitter;
  allowPrivateOutbound: boolean;
}

/** All activities, built from explicit dependencies (no module-level singletons). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createMailActivities(deps),
    ...createTurnActivities(deps),
    ...createCallbackActivities(deps),
    ...createToolActivities({
      ...deps,
      loadToolConfig: (organizationId, agentId, toolCode) =>
        loadToolConfig(deps.models, organizationId, agentId, toolCode),
    }),
  };
}
