import type { ChainRunInput } from './chains';

/** One fire of a schedule trigger (the Temporal Schedule's action). Id: workflowIds.scheduleFire, to which
 * Temporal appends the fire's scheduled time. */
export interface ScheduleFireInput {
  organizationId: string;
  triggerId: string;
}

/** One fire, as the fire's workflow asks for room for it (docs/admission.md). */
export interface ScheduleFireAdmission extends ScheduleFireInput {
  /** the fire's workflow id: what its slot is counted under */
  fireId: string;
  /** the fire's scheduled time (ISO): the event key of its handlers' executions */
  firedAt: string;
}

export type TriggerSource = 'schedule' | 'webhook';

/** One handler's execution for one schedule fire or webhook delivery. Id: workflowIds.triggerHandler. */
export interface TriggerHandlerInput {
  organizationId: string;
  source: TriggerSource;
  /** the triggerId or webhookId */
  parentId: string;
  /** the fire time (ISO) or the deliveryId */
  eventKey: string;
  handlerId: string;
}

/** What a handler's execution started: a chain run or an agent's conversation (`runId`), or why it could not. */
export type TriggerHandlerOutcome =
  | {
      status: 'started';
      runId: string;
      /** the chain run's first execution, for the workflow that asked to run it itself (a webhook delivery's
       * only handler; absent otherwise) */
      execution?: ChainRunInput;
    }
  | { status: 'failed'; statusMessage: string }
  | { status: 'skipped'; statusMessage: string };

export type ScheduleFireWorkflow = (input: ScheduleFireInput) => Promise<{ handlers: number }>;
export type TriggerHandlerWorkflow = (input: TriggerHandlerInput) => Promise<TriggerHandlerOutcome>;
export type ReconcileSchedulesWorkflow = () => Promise<{ synced: number; pending: number }>;

/** What a webhook's handlers see of a delivery (their templates read these names). */
export interface WebhookRequest {
  body: unknown;
  headers: Record<string, string>;
  method: string;
  path: string;
  queryParams: Record<string, unknown>;
  pathParams: Record<string, string>;
}

/** One accepted delivery. Id: workflowIds.webhookDelivery; its start is what makes the delivery durable. */
export interface WebhookDeliveryInput {
  organizationId: string;
  webhookId: string;
  deliveryId: string;
  /** the sender's event id, when it sent one */
  eventId: string | null;
  receivedAt: string;
  request: WebhookRequest;
}

export type WebhookDeliveryWorkflow = (input: WebhookDeliveryInput) => Promise<{ handlers: number }>;
