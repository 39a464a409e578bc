/* eslint-disable @typescript-eslint/require-await -- in-memory stand-ins of asynchronous stores answer at once */
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { RequestContext } from '@lib/auth/context';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';
import { AppError } from '@lib/errors';
import type { PageRequest } from '@lib/paging';
import { HandlerTargets } from '@lib/triggers/handler-targets';
import type { Role } from '@lib/users/member.schema';
import { WebhookDeliveriesService } from '@lib/webhooks/webhook-deliveries.service';
import { WebhookHandlersService } from '@lib/webhooks/webhook-handlers.service';
import type { WebhookDeliveryDoc, WebhookDoc, WebhookHandlerDoc } from '@lib/webhooks/webhook.schema';
import type {
  WebhookFields,
  WebhookHandlerFields,
  WebhooksRepository,
} from '@lib/webhooks/webhooks.repository';
import { WebhooksService } from '@lib/webhooks/webhooks.service';
import type { WebhooksStore } from '@lib/webhooks/store';

/*
 * The webhooks feature's services over an in-memory stand-in of webhooks.repository.ts (tenant-scoped reads, a
 * handler or delivery found only under its own webhook, handler places reserved up to 500, the log newest first,
 * duplicates counted), a fake Temporal that refuses a workflow id it has seen, a fake admission and fake agents
 * and chains. The stand-in follows the repository's documented contract, not the services under test.
 */

export const ORG = 'org_a';
export const OTHER_ORG = 'org_b';
export const BASE_URL = 'https://api.test';

export function ctxOf(role: Role, userId: string, organizationId = ORG): RequestContext {
  return { organizationId, userId, role, capabilities: ROLE_CAPABILITIES[role], via: 'session' };
}

const copy = <T>(v: T): T => structuredClone(v);

interface Tables {
  webhooks: Map<string, WebhookDoc>;
  handlers: Map<string, WebhookHandlerDoc>;
  deliveries: Map<string, WebhookDeliveryDoc>;
}

export class FakeWebhooksRepo {
  /** called inside createHandler: a test makes the insert fail after the place was reserved */
  failCreateHandler?: Error;
  constructor(
    private readonly t: Tables,
    private readonly organizationId: string,
    private readonly tick: () => Date,
  ) {}

  private own<D extends { organizationId: string }>(map: Map<string, D>, id: string) {
    const doc = map.get(id);
    return doc && doc.organizationId === this.organizationId ? doc : undefined;
  }
  private mine<D extends { organizationId: string; webhookId: string }>(
    map: Map<string, D>,
    webhookId: string,
  ) {
    return [...map.values()].filter(
      (d) => d.organizationId === this.organizationId && d.webhookId === webhookId,
    );
  }

  async get(webhookId: string) {
    const doc = this.own(this.t.webhooks, webhookId);
    return doc ? copy(doc) : null;
  }
  async list(q: PageRequest) {
    const all = [...this.t.webhooks.values()].filter((w) => w.organizationId === this.organizationId);
    return { items: copy(all.slice(q.offset, q.offset + q.limit)), total: all.length };
  }
  async create(webhookId: string, creatorUserId: string, fields: WebhookFields & { name: string }) {
    const now = this.tick();
    const doc = {
      description: '',
      signatureVerification: false,
      signingSecret: null,
      rateLimitPerMinute: null,
      handlerCount: 0,
      ...fields,
      _id: webhookId,
      organizationId: this.organizationId,
      creatorUserId,
      createdAt: now,
      updatedAt: now,
    } as WebhookDoc;
    this.t.webhooks.set(webhookId, doc);
    return copy(doc);
  }
  /** Like Mongoose's `$set`: fields given as undefined are left as they are. */
  async update(webhookId: string, fields: WebhookFields) {
    const doc = this.own(this.t.webhooks, webhookId);
    if (!doc) return null;
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(doc, { [k]: v });
    doc.updatedAt = this.tick();
    return copy(doc);
  }
  async remove(webhookId: string) {
    if (!this.own(this.t.webhooks, webhookId)) return false;
    this.t.webhooks.delete(webhookId);
    for (const h of this.mine(this.t.handlers, webhookId)) this.t.handlers.delete(h._id);
    for (const d of this.mine(this.t.deliveries, webhookId)) this.t.deliveries.delete(d._id);
    return true;
  }
  async reserveHandler(webhookId: string) {
    const doc = this.own(this.t.webhooks, webhookId);
    if (!doc || doc.handlerCount >= 500) return false;
    doc.handlerCount += 1;
    return true;
  }
  async releaseHandler(webhookId: string) {
    const doc = this.own(this.t.webhooks, webhookId);
    if (doc) doc.handlerCount -= 1;
  }
  async getHandler(webhookId: string, handlerId: string) {
    const doc = this.own(this.t.handlers, handlerId);
    return doc?.webhookId === webhookId ? copy(doc) : null;
  }
  async listHandlers(webhookId: string, q: PageRequest) {
    const all = this.mine(this.t.handlers, webhookId);
    return { items: copy(all.slice(q.offset, q.offset + q.limit)), total: all.length };
  }
  async handlerIds(webhookId: string) {
    return this.mine(this.t.handlers, webhookId).map((h) => h._id);
  }
  async createHandler(
    handlerId: string,
    webhookId: string,
    creatorUserId: string,
    fields: WebhookHandlerFields,
  ) {
    if (this.failCreateHandler) throw this.failCreateHandler;
    const now = this.tick();
    const doc = {
      ...fields,
      _id: handlerId,
      organizationId: this.organizationId,
      webhookId,
      creatorUserId,
      createdAt: now,
      updatedAt: now,
    };
    this.t.handlers.set(handlerId, doc);
    return copy(doc);
  }
  async updateHandler(webhookId: string, handlerId: string, fields: Partial<WebhookHandlerDoc>) {
    const doc = this.own(this.t.handlers, handlerId);
    if (doc?.webhookId !== webhookId) return null;
    Object.assign(doc, fields, { updatedAt: this.tick() });
    return copy(doc);
  }
  async removeHandler(webhookId: string, handlerId: string) {
    const doc = this.own(this.t.handlers, handlerId);
    if (doc?.webhookId !== webhookId) return false;
    this.t.handlers.delete(handlerId);
    return true;
  }
  async getDelivery(webhookId: string, deliveryId: string) {
    const doc = this.own(this.t.deliveries, deliveryId);
    return doc?.webhookId === webhookId ? copy(doc) : null;
  }
  async listDeliveries(webhookId: string, q: PageRequest) {
    const all = this.mine(this.t.deliveries, webhookId).reverse();
    return { items: copy(all.slice(q.offset, q.offset + q.limit)), total: all.length };
  }
  private upsert(deliveryId: string, webhookId: string) {
    let doc = this.own(this.t.deliveries, deliveryId);
    if (!doc) {
      const now = this.tick();
      doc = {
        _id: deliveryId,
        organizationId: this.organizationId,
        webhookId,
        eventId: null,
        receivedAt: null,
        requestJson: null,
        status: 'received',
        handlers: 0,
        duplicates: 0,
        lastDuplicateAt: null,
        createdAt: now,
        updatedAt: now,
      } as unknown as WebhookDeliveryDoc;
      this.t.deliveries.set(deliveryId, doc);
    }
    return doc;
  }
  async recordDelivery(deliveryId: string, fields: Partial<WebhookDeliveryDoc> & { webhookId: string }) {
    Object.assign(this.upsert(deliveryId, fields.webhookId), fields);
  }
  async markDispatched(deliveryId: string, handlers: number) {
    const doc = this.own(this.t.deliveries, deliveryId);
    if (doc) Object.assign(doc, { status: 'dispatched', handlers });
  }
  async noteDuplicate(deliveryId: string, webhookId: string) {
    const doc = this.upsert(deliveryId, webhookId);
    doc.duplicates += 1;
    doc.lastDuplicateAt = this.tick();
  }
}

export interface Started {
  workflowType: string;
  options: Record<string, unknown>;
}

export function webhooksWorld(settings = { ratePerMinute: 600, signatureToleranceSeconds: 300 }) {
  let clock = Date.UTC(2026, 0, 1);
  const tick = () => new Date((clock += 1000));
  const tables: Tables = { webhooks: new Map(), handlers: new Map(), deliveries: new Map() };
  const stores = new Map<string, WebhooksStore>();
  const repos = {
    tenant(organizationId: string): WebhooksStore {
      if (!stores.has(organizationId))
        stores.set(organizationId, {
          webhooks: new FakeWebhooksRepo(tables, organizationId, tick) as unknown as WebhooksRepository,
        });
      return stores.get(organizationId)!;
    },
  };
  const repo = (organizationId = ORG) => repos.tenant(organizationId).webhooks as unknown as FakeWebhooksRepo;

  // Handler runs: what each delivery's handlers started; which webhooks had their records removed.
  const removedRuns: Array<[string, string]> = [];
  const runsAsked: Array<[string, string, string]> = [];
  const handlerRuns = {
    async forEvent(organizationId: string, parentId: string, eventKey: string) {
      runsAsked.push([organizationId, parentId, eventKey]);
      return [{ handlerId: 'whh_x', status: 'success' }] as never;
    },
    async removeFor(organizationId: string, parentId: string) {
      removedRuns.push([organizationId, parentId]);
    },
  };
  const webhooks = new WebhooksService(repos, handlerRuns, BASE_URL);

  // Agents the caller may use and chains of the organization, by id: [organizationId, name].
  const agents = new Map<string, [string, string]>();
  const chains = new Map<string, [string, string]>();
  const targets = new HandlerTargets(
    {
      getMany: async (organizationId: string, ids: string[]) =>
        ids.flatMap((id) =>
          agents.get(id)?.[0] === organizationId ? [{ agentId: id, name: agents.get(id)![1] }] : [],
        ),
    } as never,
    {
      chain: async (ctx: RequestContext, id: string) =>
        chains.get(id)?.[0] === ctx.organizationId ? { _id: id } : null,
      getMany: async (organizationId: string, ids: string[]) =>
        ids.flatMap((id) =>
          chains.get(id)?.[0] === organizationId ? [{ _id: id, name: chains.get(id)![1] }] : [],
        ),
    } as never,
    {
      getAccessibleAgent: async (ctx: RequestContext, id: string) =>
        agents.get(id)?.[0] === ctx.organizationId ? { agentId: id } : null,
    } as never,
  );
  const handlers = new WebhookHandlersService(repos, webhooks, targets);

  // Temporal: a workflow id starts once; `temporalDown` makes every start fail.
  const started: Started[] = [];
  const seen = new Set<string>();
  let temporalDown: Error | null = null;
  const temporal = {
    taskQueue: 'tq',
    client: {
      workflow: {
        async start(workflowType: string, options: Record<string, unknown>) {
          if (temporalDown) throw temporalDown;
          const id = options.workflowId as string;
          if (seen.has(id))
            throw new WorkflowExecutionAlreadyStartedError('already started', id, workflowType);
          seen.add(id);
          started.push({ workflowType, options });
        },
      },
    },
  };

  // Admission: kinds listed in `full` are at their bound (429 backlog_full); slots given back are listed.
  const full = new Set<string>();
  const admissionCalls: unknown[][] = [];
  const released: string[] = [];
  const refuse = (kinds: string[]) => {
    const kind = kinds.find((k) => full.has(k));
    if (kind) throw new AppError(429, 'backlog_full', `${kind} full`);
  };
  const admission = {
    async refuseIfFull(organizationId: string, kinds: string[]) {
      admissionCalls.push(['refuseIfFull', organizationId, kinds]);
      refuse(kinds);
    },
    async admit(organizationId: string, kind: string, workflowId: string, also: string[] = []) {
      admissionCalls.push(['admit', organizationId, kind, workflowId, also]);
      refuse([kind, ...also]);
      return { undo: async () => void released.push(workflowId) };
    },
    async startCounted(
      organizationId: string,
      kind: string,
      workflowId: string,
      start: () => Promise<{ alreadyStarted: boolean }>,
      slot?: { undo: () => Promise<void> },
    ) {
      admissionCalls.push(['startCounted', organizationId, kind, workflowId]);
      try {
        const res = await start();
        if (res.alreadyStarted) await slot?.undo();
        return res;
      } catch (err) {
        await slot?.undo();
        throw err;
      }
    },
  };

  // Rate limit: the limit each delivery was checked against; `rateLimited` refuses the next ones.
  const taken: Array<[string, number]> = [];
  let rateLimited: Error | null = null;
  const limiter = {
    async take(webhookId: string, perMinute: number) {
      taken.push([webhookId, perMinute]);
      if (rateLimited) throw rateLimited;
    },
  };
  // What was logged: the messages, and the fields each carried.
  const logged: string[] = [];
  const loggedWith: object[] = [];
  const logger = {
    error: (o: object, msg: string) => {
      loggedWith.push(o);
      logged.push(msg);
    },
    warn: () => {},
  };
  const deliveries = new WebhookDeliveriesService(
    repos,
    temporal as never,
    limiter as never,
    admission,
    settings,
    logger as never,
  );

  return {
    tables,
    repos,
    repo,
    webhooks,
    handlers,
    deliveries,
    agents,
    chains,
    removedRuns,
    runsAsked,
    started,
    full,
    admissionCalls,
    released,
    taken,
    logged,
    loggedWith,
    setTemporalDown: (err: Error | null) => void (temporalDown = err),
    setRateLimited: (err: Error | null) => void (rateLimited = err),
  };
}

export type WebhooksWorld = ReturnType<typeof webhooksWorld>;

/** The AppError a call fails with, as the API would answer it. */
export async function refusal(call: Promise<unknown>) {
  try {
    await call;
  } catch (err) {
    const e = err as { status?: number; code?: string; message: string };
    return { status: e.status, code: e.code, message: e.message };
  }
  throw new Error('expected a refusal, but the call succeeded');
}
