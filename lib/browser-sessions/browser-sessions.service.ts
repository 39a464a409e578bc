import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  WORKFLOWS,
  browseUpdate,
  endBrowserSessionSignal,
  workflowIds,
  type BrowseRequest,
  type BrowseResult,
  type BrowserSessionInput,
} from '@contracts';
import type { RequestContext } from '@lib/auth/context';
import { findOrCreate } from '@lib/db/duplicate-key';
import { iso } from '@lib/db/view';
import { AppError, ConflictError, notFound, TooManyRequestsError } from '@lib/errors';
import { derivedId, newId } from '@lib/ids';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { BrowserSessionDoc, SessionOwner } from './browser-session.schema';
import type { BrowserSessionsStore } from './store';

export interface BrowserSessionSettings {
  /** Sessions one organization may have active at once (429 beyond). */
  maxPerOrg: number;
  /** A session without an action for this long expires. */
  idleTimeoutSeconds: number;
}

/** How long a screenshot's download link in a session record stays valid. */
const SCREENSHOT_LINK_SECONDS = 15 * 60;

export const screenshotKey = (organizationId: string, sessionId: string, screenshotId: string) =>
  `browser-sessions/${organizationId}/${sessionId}/${screenshotId}.png`;

async function toView(s: BrowserSessionDoc, objects: Pick<ObjectStore, 'downloadUrl'>) {
  return {
    sessionId: s._id,
    organizationId: s.organizationId,
    owner:
      s.ownerType === 'conversation'
        ? { type: 'conversation' as const, conversationId: s.conversationId! }
        : { type: 'chain_run' as const, actionChainId: s.actionChainId!, runId: s.runId! },
    status: s.status,
    startedAt: s.startedAt.toISOString(),
    lastActivityAt: s.lastActivityAt.toISOString(),
    endedAt: iso(s.endedAt),
    endReason: s.endReason ?? null,
    currentUrl: s.currentUrl ?? null,
    screenshots: await Promise.all(
      s.screenshots.map(async (shot) => ({
        screenshotId: shot.screenshotId,
        pageUrl: shot.pageUrl ?? null,
        takenAt: shot.takenAt.toISOString(),
        downloadUrl: await objects.downloadUrl(shot.key, `${shot.screenshotId}.png`, {
          expiresIn: SCREENSHOT_LINK_SECONDS,
          contentType: 'image/png',
        }),
      })),
    ),
  };
}
export type BrowserSessionView = Awaited<ReturnType<typeof toView>>;

/** Ends an owner's active sessions (its conversation was deleted, its chain run finished). */
export async function endSessionsOf(
  repos: Tenants<BrowserSessionsStore>,
  temporal: TemporalDeps,
  organizationId: string,
  owner: SessionOwner,
) {
  const sessions = repos.tenant(organizationId).browserSessions;
  for (const s of await sessions.listForOwner(owner, true)) {
    await sessions.end(s._id, 'stopped', 'owner_ended');
    await sessions.releaseSlot(s._id);
    await signalEnd(temporal, organizationId, s._id, 'owner_ended');
  }
}

async function signalEnd(
  temporal: TemporalDeps,
  organizationId: string,
  sessionId: string,
  reason: 'stopped' | 'owner_ended',
) {
  try {
    await temporal.client.workflow
      .getHandle(workflowIds.browserSession(organizationId, sessionId))
      .signal(endBrowserSessionSignal, { reason });
  } catch (err) {
    // Its workflow has ended already: nothing runs to stop.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

// Conversations and chains own sessions and use the tools; browser sessions sit below the tools. So the service
// asks those features through these narrow ports, wired in lib/services.ts, rather than importing them.

/** The conversation a session belongs to, if the caller may see it (not-found otherwise). */
export interface ConversationAccess {
  load(ctx: RequestContext, conversationId: string): Promise<{ isBrowserTask: boolean }>;
}

/** Throws not-found unless the caller may see the chain run. */
export interface ChainRunAccess {
  get(ctx: RequestContext, actionChainId: string, runId: string): Promise<unknown>;
}

export class BrowserSessionsService {
  constructor(
    private readonly repos: Tenants<BrowserSessionsStore>,
    private readonly conversations: ConversationAccess,
    private readonly chainRuns: ChainRunAccess,
    private readonly temporal: TemporalDeps,
    private readonly objects: Pick<ObjectStore, 'downloadUrl'>,
    private readonly settings: BrowserSessionSettings,
  ) {}

  private views(sessions: BrowserSessionDoc[]) {
    return Promise.all(sessions.map((s) => toView(s, this.objects)));
  }

  /**
   * A new session for the owner: takes one of the organization's slots (429 when none is free), writes the
   * record and starts its workflow, which launches the browser in a worker. A sessionId already taken (a
   * retried tool call) answers with that session.
   */
  private async start(organizationId: string, owner: SessionOwner, sessionId: string) {
    const sessions = this.repos.tenant(organizationId).browserSessions;
    const existing = await sessions.get(sessionId);
    if (existing) return existing;
    if (!(await sessions.claimSlot(sessionId, this.settings.maxPerOrg)))
      throw new TooManyRequestsError(
        `the organization already has ${this.settings.maxPerOrg} active browser sessions; stop one first`,
        30,
        'browser_session_limit',
      );
    let doc: BrowserSessionDoc;
    try {
      ({ doc } = await findOrCreate(
        () => sessions.get(sessionId),
        () => sessions.create(sessionId, owner, new Date()),
      ));
    } catch (err) {
      await sessions.releaseSlot(sessionId);
      throw err;
    }
    const input: BrowserSessionInput = {
      organizationId,
      sessionId,
      idleTimeoutMs: this.settings.idleTimeoutSeconds * 1000,
    };
    await startIdempotent(this.temporal, WORKFLOWS.browserSession, {
      workflowId: workflowIds.browserSession(organizationId, sessionId),
      args: [input],
      attributes: { organizationId },
    });
    return doc;
  }

  /** POST browser-sessions: a session for a browser-task conversation. */
  async create(ctx: RequestContext, conversationId: string): Promise<BrowserSessionView> {
    const conversation = await this.conversations.load(ctx, conversationId);
    if (!conversation.isBrowserTask)
      throw new ConflictError(
        'browser sessions belong to browser tasks: create the conversation with isBrowserTask true',
        'not_a_browser_task',
      );
    const doc = await this.start(ctx.organizationId, { type: 'conversation', conversationId }, newId('bws'));
    return toView(doc, this.objects);
  }

  async list(ctx: RequestContext, conversationId: string) {
    await this.conversations.load(ctx, conversationId);
    const sessions = this.repos.tenant(ctx.organizationId).browserSessions;
    return {
      browserSessions: await this.views(
        await sessions.listForOwner({ type: 'conversation', conversationId }),
      ),
    };
  }

  async listForRun(ctx: RequestContext, actionChainId: string, runId: string) {
    await this.chainRuns.get(ctx, actionChainId, runId);
    const sessions = this.repos.tenant(ctx.organizationId).browserSessions;
    return {
      browserSessions: await this.views(
        await sessions.listForOwner({ type: 'chain_run', actionChainId, runId }),
      ),
    };
  }

  /**
   * Stops a session at once (status `stopped`, its slot free) and tells its workflow, which closes the browser.
   * Stopping a session that has already ended changes nothing and answers with it as it is.
   */
  async stop(ctx: RequestContext, conversationId: string, sessionId: string): Promise<BrowserSessionView> {
    await this.conversations.load(ctx, conversationId);
    const sessions = this.repos.tenant(ctx.organizationId).browserSessions;
    const session = await sessions.get(sessionId);
    if (session?.conversationId !== conversationId) throw notFound('browser session');
    const stopped = await sessions.end(sessionId, 'stopped', 'stopped');
    if (stopped) {
      await sessions.releaseSlot(sessionId);
      await signalEnd(this.temporal, ctx.organizationId, sessionId, 'stopped');
    }
    return toView(stopped ?? (await sessions.get(sessionId))!, this.objects);
  }

  /**
   * The session a `browse` call uses: the one named, or the owner's newest active session, or a new one whose
   * id derives from `callKey` (a retried call finds the session its first attempt started).
   */
  async forTool(organizationId: string, owner: SessionOwner, callKey: string, sessionId?: string) {
    const sessions = this.repos.tenant(organizationId).browserSessions;
    if (sessionId) {
      const named = await sessions.get(sessionId);
      const mine =
        named &&
        (owner.type === 'conversation'
          ? named.conversationId === owner.conversationId
          : named.runId === owner.runId);
      if (!mine) throw new AppError(404, 'not_found', `there is no browser session ${sessionId} here`);
      return named;
    }
    const [active] = await sessions.listForOwner(owner, true);
    if (active) return active;
    const derived = derivedId('bws', [callKey], 16);
    return this.start(organizationId, owner, derived);
  }

  /** Runs one action in the session's browser (through its workflow, in the worker holding the browser). */
  async act(organizationId: string, sessionId: string, request: BrowseRequest): Promise<BrowseResult> {
    const handle = this.temporal.client.workflow.getHandle(
      workflowIds.browserSession(organizationId, sessionId),
    );
    try {
      return await handle.executeUpdate(browseUpdate, { args: [request] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError)
        return { ok: false, url: null, error: 'the browser session has ended; start a new one' };
      throw err;
    }
  }
}
