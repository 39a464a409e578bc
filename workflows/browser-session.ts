import { condition, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import {
  FAILURES,
  browseUpdate,
  endBrowserSessionSignal,
  type BrowseRequest,
  type BrowseResult,
  type BrowserEndReason,
  type BrowserSessionInput,
} from '@contracts';
import type { BrowserActivities } from './activity-types';
import { failureReason } from './agent-loop';

// Launching Chromium: any worker with a browser may take it; a failed launch is tried once more.
const launcher = proxyActivities<BrowserActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 2, nonRetryableErrorTypes: [FAILURES.browserGone] },
});

const store = proxyLocalActivities<BrowserActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumAttempts: 10 },
});

/** Actions run where the browser is: that worker's own queue. When it does not pick an action up within
 * the schedule-to-start timeout the worker is gone, and its browser with it. Never retried: an action is not
 * idempotent (a click, a form post), and the tool reports the failure to the model. */
function pinnedTo(taskQueue: string) {
  return proxyActivities<BrowserActivities>({
    taskQueue,
    scheduleToStartTimeout: '30 seconds',
    startToCloseTimeout: '2 minutes',
    retry: { maximumAttempts: 1 },
  });
}

const STATUS_OF: Record<BrowserEndReason, 'stopped' | 'expired' | 'failed'> = {
  stopped: 'stopped',
  owner_ended: 'stopped',
  idle_timeout: 'expired',
  browser_failed: 'failed',
};

/**
 * One browser session (id: workflowIds.browserSession): launches its Chromium in some worker, runs each
 * `browse` update there one at a time, and ends it on a stop or owner-end signal, after `idleTimeoutMs` without
 * an action, or when the browser or its worker is gone; then closes the browser and writes the final status.
 */
export async function browserSessionWorkflow(input: BrowserSessionInput): Promise<void> {
  let ending: { reason: BrowserEndReason; detail: string } | null = null;
  const end = (reason: BrowserEndReason, detail: string) => {
    ending ??= { reason, detail };
  };
  let pinned: ReturnType<typeof pinnedTo> | null = null;
  let actions = 0;
  let busy = false;

  setHandler(endBrowserSessionSignal, ({ reason }) => end(reason, reason));
  setHandler(
    browseUpdate,
    async ({ request, allowedHosts }): Promise<BrowseResult> => {
      // One action at a time, in the order they arrived: a page is one thing.
      await condition(() => (pinned !== null && !busy) || ending !== null);
      if (ending || !pinned) return { ok: false, url: null, error: 'the browser session has ended' };
      busy = true;
      try {
        return await pinned.browserAct({ ...input, request, allowedHosts });
      } catch (err) {
        end('browser_failed', failureReason(err));
        return { ok: false, url: null, error: `the browser session failed: ${failureReason(err)}` };
      } finally {
        busy = false;
        actions++;
      }
    },
    {
      validator: (_request: BrowseRequest) => {
        if (ending) throw new Error('the browser session has ended');
      },
    },
  );

  try {
    const { taskQueue } = await launcher.openBrowser(input);
    pinned = pinnedTo(taskQueue);
  } catch (err) {
    end('browser_failed', failureReason(err));
  }

  while (!ending) {
    const seen = actions;
    const active = await condition(() => ending !== null || busy || actions !== seen, input.idleTimeoutMs);
    if (!active) end('idle_timeout', 'idle_timeout');
    else if (busy) await condition(() => !busy);
  }
  // An action under way finishes before the browser closes (its update then answers).
  await condition(() => !busy);
  if (pinned) {
    try {
      await pinned.closeBrowser(input);
    } catch {
      // The worker is gone, and its Chromium with it.
    }
  }
  const final: { reason: BrowserEndReason; detail: string } = ending;
  await store.finishBrowserSession({
    ...input,
    status: STATUS_OF[final.reason],
    endReason: final.reason === 'browser_failed' ? `browser_failed: ${final.detail}` : final.reason,
  });
}
