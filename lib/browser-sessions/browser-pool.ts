import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { BrowseAction } from '@contracts';
import { BlockedAddressError, type OutboundClient } from '@lib/http/outbound';
import type { Logger } from '@lib/logger';
import { hostAllowed } from './allow-list';
import { createPageGuard, type GuardState } from './page-guard';

/** The command-line switch that names a browser's session: how an operator (or a test) finds its process. */
export const SESSION_SWITCH = '--agent-workspace-browser-session';

const ACTION_TIMEOUT_MS = 15_000;
const NAVIGATION_TIMEOUT_MS = 30_000;
/** The most page text an action answers with (it goes to the model and into the session's history). */
export const MAX_TEXT_CHARS = 20_000;

export interface BrowserPoolSettings {
  chromiumPath: string;
  /** Chromium's own sandbox needs user namespaces; a container running as root has to go without. */
  noSandbox: boolean;
  outbound: OutboundClient;
  logger: Logger;
}

/** Read through a function: the page guard sets it while an action is under way. */
const lastRefusal = (guard: GuardState) => guard.lastRefusal;

/** Chromium is gone (crashed or closed): the session cannot go on. */
export class BrowserGoneError extends Error {}
/** The action cannot be done as asked (a refused address, a selector that matches nothing…): told to the model. */
export class BrowseActionError extends Error {}

interface Held {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  guard: GuardState;
  gone: boolean;
}

export interface ActionOutcome {
  url: string;
  title: string;
  text?: string;
  truncated?: boolean;
  screenshot?: Buffer;
}

/**
 * The headless Chromium processes of this worker process, one per session it holds. Each browser is its own
 * process (not a context in a shared one), so stopping a session ends its process and a crash takes one
 * session with it. Launch switches keep Chromium off the network: every request is answered by the page
 * guard; anything the guard cannot intercept (WebSockets are closed, WebRTC has no UDP) goes to a proxy
 * address nothing listens on.
 */
export class BrowserPool {
  private readonly held = new Map<string, Promise<Held>>();

  constructor(
    /** The worker-specific task queue actions of these sessions are sent to. */
    readonly taskQueue: string,
    private readonly settings: BrowserPoolSettings,
  ) {}

  /** Launches the session's browser here; opening an open session again is a no-op. */
  async open(sessionId: string): Promise<void> {
    if (!this.held.has(sessionId)) {
      const launching = this.launch(sessionId);
      this.held.set(sessionId, launching);
      launching.catch(() => this.held.delete(sessionId));
    }
    await this.held.get(sessionId);
  }

  private async launch(sessionId: string): Promise<Held> {
    const browser = await chromium.launch({
      executablePath: this.settings.chromiumPath,
      args: [
        `${SESSION_SWITCH}=${sessionId}`,
        ...(this.settings.noSandbox ? ['--no-sandbox'] : []),
        '--proxy-server=http://127.0.0.1:9',
        '--proxy-bypass-list=<-loopback>',
        '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
        '--disable-background-networking',
      ],
    });
    const context = await browser.newContext({ serviceWorkers: 'block', acceptDownloads: false });
    const guard: GuardState = { allowedHosts: [], lastRefusal: null };
    await context.route('**/*', createPageGuard(this.settings.outbound, guard));
    await context.routeWebSocket(/.*/, (ws) => ws.close({ code: 1008, reason: 'not allowed' }));
    const page = await context.newPage();
    const held: Held = { browser, context, page, guard, gone: false };
    browser.on('disconnected', () => {
      held.gone = true;
    });
    this.settings.logger.info({ sessionId }, 'browser launched');
    return held;
  }

  private async get(sessionId: string): Promise<Held> {
    const held = await this.held.get(sessionId);
    if (!held || held.gone) throw new BrowserGoneError('the browser of this session is no longer running');
    return held;
  }

  /** Runs one action; navigation is limited to `allowedHosts` (for this action and what it causes). */
  async act(sessionId: string, action: BrowseAction, allowedHosts: string[]): Promise<ActionOutcome> {
    const held = await this.get(sessionId);
    held.guard.allowedHosts = allowedHosts;
    held.guard.lastRefusal = null;
    const { page } = held;
    const outcome = async (extra: Partial<ActionOutcome> = {}): Promise<ActionOutcome> => ({
      url: page.url(),
      title: await page.title().catch(() => ''),
      ...extra,
    });
    try {
      switch (action.action) {
        case 'navigate': {
          const url = this.settings.outbound.parse(action.url);
          if (!hostAllowed(url.hostname, allowedHosts))
            throw new BrowseActionError(`${url.hostname} is not on the allow-list of the browse tool`);
          await page.goto(url.href, { timeout: NAVIGATION_TIMEOUT_MS });
          return await outcome();
        }
        case 'read_text': {
          const text = await page
            .locator(action.selector ?? 'body')
            .first()
            .innerText({ timeout: ACTION_TIMEOUT_MS });
          return await outcome({
            text: text.slice(0, MAX_TEXT_CHARS),
            truncated: text.length > MAX_TEXT_CHARS,
          });
        }
        case 'click':
          await page.locator(action.selector).first().click({ timeout: ACTION_TIMEOUT_MS });
          await page.waitForLoadState('load', { timeout: NAVIGATION_TIMEOUT_MS });
          return await outcome();
        case 'fill':
          await page.locator(action.selector).first().fill(action.text, { timeout: ACTION_TIMEOUT_MS });
          return await outcome();
        case 'screenshot':
          return await outcome({
            screenshot: await page.screenshot({ type: 'png', timeout: ACTION_TIMEOUT_MS }),
          });
      }
    } catch (err) {
      if (held.gone) throw new BrowserGoneError('the browser of this session stopped');
      if (err instanceof BrowseActionError) throw err;
      if (err instanceof BlockedAddressError) throw new BrowseActionError(`refused: ${err.message}`);
      const refusal = lastRefusal(held.guard);
      const message = (err as Error).message.split('\n')[0] ?? String(err);
      throw new BrowseActionError(refusal ? `refused: ${refusal}` : message);
    }
  }

  /** Ends the session's browser process (nothing happens for a session this process does not hold). */
  async close(sessionId: string): Promise<void> {
    const held = await this.held.get(sessionId)?.catch(() => undefined);
    this.held.delete(sessionId);
    if (held) {
      await held.browser.close().catch(() => undefined);
      this.settings.logger.info({ sessionId }, 'browser closed');
    }
  }

  /** Every browser of this process (the worker is shutting down). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.held.keys()].map((id) => this.close(id)));
  }

  /** Sessions whose browser runs in this process. */
  get sessionIds(): string[] {
    return [...this.held.keys()];
  }
}
