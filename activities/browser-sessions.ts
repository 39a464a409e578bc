import { ApplicationFailure } from '@temporalio/activity';
import {
  FAILURES,
  type BrowseRequest,
  type BrowseResult,
  type BrowserSessionInput,
  type OpenedBrowser,
} from '@contracts';
import type { SessionStatus } from '@lib/browser-sessions/browser-session.schema';
import { BrowseActionError, BrowserGoneError, type BrowserPool } from '@lib/browser-sessions/browser-pool';
import { screenshotKey } from '@lib/browser-sessions/browser-sessions.service';
import type { BrowserSessionsStore } from '@lib/browser-sessions/store';
import type { Tenants } from '@lib/db/tenants';
import { newId } from '@lib/ids';
import type { ObjectStore } from '@lib/knowledge-bases/object-store';
import type { Logger } from '@lib/logger';

export interface BrowserActivityDeps {
  repos: Tenants<BrowserSessionsStore>;
  objects: Pick<ObjectStore, 'put'>;
  logger: Logger;
  /** This worker process's browsers (absent where no worker runs, e.g. in the API). */
  browsers?: BrowserPool;
}

const gone = (message: string) => ApplicationFailure.nonRetryable(message, FAILURES.browserGone);

/**
 * The activities of browser sessions. openBrowser runs on the shared task queue (whichever worker takes it
 * launches the browser and answers with its own worker-specific queue); browserAct and closeBrowser are sent
 * to that queue, so they run in the process that holds the browser; finishBrowserSession writes the record.
 */
export function createBrowserActivities(deps: BrowserActivityDeps) {
  const pool = () => {
    if (!deps.browsers) throw new Error('this process runs no browsers');
    return deps.browsers;
  };

  return {
    async openBrowser(input: BrowserSessionInput): Promise<OpenedBrowser> {
      const sessions = deps.repos.tenant(input.organizationId).browserSessions;
      const session = await sessions.get(input.sessionId);
      if (session?.status !== 'active') throw gone('the session has ended');
      const browsers = pool();
      await browsers.open(input.sessionId);
      if (!(await sessions.setTaskQueue(input.sessionId, browsers.taskQueue))) {
        // Ended while Chromium was starting: nothing will use it.
        await browsers.close(input.sessionId);
        throw gone('the session has ended');
      }
      return { taskQueue: browsers.taskQueue };
    },

    async browserAct(input: BrowserSessionInput & BrowseRequest): Promise<BrowseResult> {
      const sessions = deps.repos.tenant(input.organizationId).browserSessions;
      try {
        const out = await pool().act(input.sessionId, input.request, input.allowedHosts);
        let screenshot;
        if (out.screenshot) {
          const screenshotId = newId('shot');
          const key = screenshotKey(input.organizationId, input.sessionId, screenshotId);
          await deps.objects.put(key, out.screenshot, 'image/png');
          screenshot = { screenshotId, key, pageUrl: out.url, takenAt: new Date() };
        }
        await sessions.recordActivity(input.sessionId, out.url, screenshot);
        return {
          ok: true,
          url: out.url,
          title: out.title,
          ...(out.text !== undefined ? { text: out.text, truncated: out.truncated } : {}),
          ...(screenshot ? { screenshotId: screenshot.screenshotId } : {}),
        };
      } catch (err) {
        if (err instanceof BrowserGoneError) throw gone(err.message);
        if (!(err instanceof BrowseActionError)) throw err;
        const session = await sessions.get(input.sessionId);
        await sessions.recordActivity(input.sessionId, session?.currentUrl ?? null);
        return { ok: false, url: session?.currentUrl ?? null, error: err.message };
      }
    },

    async closeBrowser(input: BrowserSessionInput): Promise<void> {
      await pool().close(input.sessionId);
    },

    /** The session's final status (unless a stop already set it) and its slot given back. */
    async finishBrowserSession(
      input: BrowserSessionInput & { status: Exclude<SessionStatus, 'active'>; endReason: string },
    ): Promise<void> {
      const sessions = deps.repos.tenant(input.organizationId).browserSessions;
      await sessions.end(input.sessionId, input.status, input.endReason);
      await sessions.releaseSlot(input.sessionId);
      deps.logger.info(
        { organizationId: input.organizationId, sessionId: input.sessionId, status: input.status },
        'browser session ended',
      );
    },
  };
}
