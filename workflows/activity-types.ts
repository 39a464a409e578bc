// What each feature's workflows may call: its own activities only (types only; the workflow bundle takes no
// activity code). A call to another feature's activity through a proxy then fails to type-check.
import type { createAnalysisActivities } from '../activities/analyses/runs';
import type { createBrowserActivities } from '../activities/browser-sessions';
import type { createCallbackActivities } from '../activities/callbacks';
import type { createChainActivities } from '../activities/chains/runs';
import type { createTurnActivities } from '../activities/conversations';
import type { createEmailActivities } from '../activities/email-agents';
import type { createEtlActivities } from '../activities/knowledge-bases/etl';
import type { createIngestionActivities } from '../activities/knowledge-bases/ingestion';
import type { createMaintenanceActivities } from '../activities/knowledge-bases/maintenance';
import type { createTaskPlanActivities } from '../activities/task-plans';
import type { createToolActivities } from '../activities/tools';
import type { createTriggerHandlerActivities } from '../activities/triggers/handlers';
import type { createScheduleActivities } from '../activities/schedules';
import type { createWebhookActivities } from '../activities/triggers/webhooks';
import type { createUserActivities } from '../activities/users';

type Of<Create extends (...args: never[]) => object> = ReturnType<Create>;

/** A chat turn and an agent's call of another agent: the conversation's records, the model, tools, the task
 * plan, the caller's callback, and the chain runs an agent starts as a tool. */
export type TurnActivities = Of<typeof createTurnActivities> &
  Of<typeof createTaskPlanActivities> &
  Of<typeof createToolActivities> &
  Of<typeof createCallbackActivities> &
  Pick<Of<typeof createChainActivities>, 'createAgentChainRun' | 'chainRunOutcome'>;
export type ChainActivities = Of<typeof createChainActivities>;
export type KnowledgeBaseActivities = Of<typeof createIngestionActivities> &
  Of<typeof createMaintenanceActivities> &
  Of<typeof createEtlActivities>;
export type TriggerActivities = Of<typeof createTriggerHandlerActivities> &
  Of<typeof createScheduleActivities> &
  Of<typeof createWebhookActivities>;
export type AnalysisActivities = Of<typeof createAnalysisActivities>;
export type EmailActivities = Of<typeof createEmailActivities>;
export type UserActivities = Of<typeof createUserActivities>;
export type BrowserActivities = Of<typeof createBrowserActivities>;
