import type { SignalDefinition, UpdateDefinition } from '@temporalio/common';

/** Why a browser session ended; `stopped` by a user, `expired` idle, `owner_ended` its conversation or run. */
export type BrowserEndReason = 'stopped' | 'idle_timeout' | 'owner_ended' | 'browser_failed';

/** One browser session's workflow (id: workflowIds.browserSession). */
export interface BrowserSessionInput {
  organizationId: string;
  sessionId: string;
  /** Ends the session after this long without an action. */
  idleTimeoutMs: number;
}

/** What the `browse` tool asks a session to do. */
export type BrowseAction =
  | { action: 'navigate'; url: string }
  | { action: 'read_text'; selector?: string }
  | { action: 'click'; selector: string }
  | { action: 'fill'; selector: string; text: string }
  | { action: 'screenshot' };

/** One action with the allow-list of the attachment that asked for it (navigation is checked against it). */
export interface BrowseRequest {
  request: BrowseAction;
  allowedHosts: string[];
}

/** What an action answers: the page it ended on, and the action's result or why it failed. */
export interface BrowseResult {
  ok: boolean;
  url: string | null;
  title?: string;
  text?: string;
  /** The text was cut to the limit. */
  truncated?: boolean;
  screenshotId?: string;
  error?: string;
}

/** What the browser worker answers when it has launched Chromium: the queue its session actions go to. */
export interface OpenedBrowser {
  taskQueue: string;
}

export interface EndBrowserSession {
  reason: BrowserEndReason;
}

/** End the session (stop, owner ended). (What `defineSignal` builds, without the workflow library.) */
export const endBrowserSessionSignal = {
  type: 'signal',
  name: 'endBrowserSession',
} as SignalDefinition<[EndBrowserSession], 'endBrowserSession'>;

/** Run one action in the session's browser and answer with its result. */
export const browseUpdate = {
  type: 'update',
  name: 'browse',
} as UpdateDefinition<BrowseResult, [BrowseRequest], 'browse'>;
