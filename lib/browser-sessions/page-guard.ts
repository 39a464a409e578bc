import type { Route } from 'playwright-core';
import { BlockedAddressError, type OutboundClient } from '@lib/http/outbound';
import { hostAllowed } from './allow-list';

/** A page request's response is read at most to this size (bytes); larger ones fail. */
const MAX_RESPONSE_BYTES = 20 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;

/** Headers of the browser's request that the guarded client sets itself. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'keep-alive',
  'transfer-encoding',
  'proxy-connection',
  'upgrade',
]);
/** The guarded client has already decoded the body and knows its length. */
const DROPPED_RESPONSE_HEADERS = new Set([
  'content-encoding',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/** What the guard of one browser knows: the allow-list of the action under way, and why it last refused. */
export interface GuardState {
  allowedHosts: readonly string[];
  lastRefusal: string | null;
}

/**
 * Every request of every page of a session's browser context goes through here (context.route on `**\/*`):
 * nothing reaches the network from Chromium itself. A navigation (top-level or frame, including each hop of a
 * redirect, which comes back here as a request of its own) must be on the allow-list; every request (pages,
 * subresources, fetches, form posts) is made by the one guarded outbound client, which refuses non-http(s)
 * URLs and non-public addresses at connect time (unless private outbound is allowed) and follows no redirect.
 * The response is handed to the page as it came.
 */
export function createPageGuard(outbound: OutboundClient, state: GuardState) {
  const refuse = async (route: Route, reason: string) => {
    state.lastRefusal = reason;
    await route.abort('blockedbyclient');
  };
  return async (route: Route) => {
    const request = route.request();
    let url: URL;
    try {
      url = outbound.parse(request.url());
    } catch (err) {
      return refuse(route, (err as Error).message);
    }
    if (request.isNavigationRequest() && !hostAllowed(url.hostname, state.allowedHosts))
      return refuse(route, `${url.hostname} is not on the allow-list of the browse tool`);
    const headers = Object.fromEntries(
      Object.entries(await request.allHeaders()).filter(
        ([name]) => !name.startsWith(':') && !DROPPED_REQUEST_HEADERS.has(name.toLowerCase()),
      ),
    );
    try {
      const res = await outbound.requestBytes(
        url.href,
        { method: request.method(), headers, body: request.postDataBuffer() ?? undefined },
        { timeoutMs: REQUEST_TIMEOUT_MS, maxBodyBytes: MAX_RESPONSE_BYTES },
      );
      if (res.truncated) return refuse(route, `the response of ${url.href} is larger than the limit`);
      await route.fulfill({
        status: res.status,
        headers: Object.fromEntries(
          Object.entries(res.headers).filter(([name]) => !DROPPED_RESPONSE_HEADERS.has(name)),
        ),
        body: res.body,
      });
    } catch (err) {
      if (err instanceof BlockedAddressError) return refuse(route, err.message);
      await route.abort('failed').catch(() => undefined);
    }
  };
}
