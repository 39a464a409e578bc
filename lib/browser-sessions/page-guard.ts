import type { Route } from 'playwright-core';
import { BlockedAddressError, type OutboundClient } from '@lib/http/outbound';
import { hostAllowed } from './allow-list';

/** A page request's response is read at most to this size (bytes); larger ones fail. */
const MAX_RESPONSE_BYTES = 20 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

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
/** What a browser never carries to another origin on a redirect (the fetch standard drops Authorization; cookies
 * belong to the site that set them, and the browser would send the new origin's own, which the guard cannot). */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
/** Headers that describe a body: they go when a redirect turns the request into a GET without one. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);
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
 * redirect, which the guard follows itself) must be on the allow-list; every request (pages,
 * subresources, fetches, form posts) is made by the one guarded outbound client, which refuses non-http(s)
 * URLs and non-public addresses at connect time (unless private outbound is allowed).
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
    let headers = Object.fromEntries(
      Object.entries(await request.allHeaders()).filter(
        ([name]) => !name.startsWith(':') && !DROPPED_REQUEST_HEADERS.has(name.toLowerCase()),
      ),
    );
    const navigation = request.isNavigationRequest();
    let method = request.method();
    let body: Buffer | undefined = request.postDataBuffer() ?? undefined;
    const cookies: string[] = [];
    const origin = url.origin;
    const without = (names: Set<string>) =>
      Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
    try {
      // Playwright does not route the requests of a redirect, so the guard follows redirects itself: every
      // hop is checked (allow-list for navigations, the address guard for all) and the page gets the last
      // response (with the cookies every hop set), at the URL it asked for.
      for (let hop = 0; ; hop++) {
        const res = await outbound.requestBytes(
          url.href,
          { method, headers, body },
          { timeoutMs: REQUEST_TIMEOUT_MS, maxBodyBytes: MAX_RESPONSE_BYTES },
        );
        if (res.headers['set-cookie']) cookies.push(res.headers['set-cookie']);
        const location = REDIRECTS.has(res.status) ? res.headers.location : undefined;
        if (location && hop < MAX_REDIRECTS) {
          url = outbound.parse(new URL(location, url).href);
          if (navigation && !hostAllowed(url.hostname, state.allowedHosts))
            return await refuse(route, `${url.hostname} is not on the allow-list of the browse tool`);
          if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
            method = 'GET';
            body = undefined;
            headers = without(BODY_HEADERS);
          }
          // An open redirect on an allowed site must not hand that site's session to wherever it points.
          if (url.origin !== origin) headers = without(CREDENTIAL_HEADERS);
          continue;
        }
        if (res.truncated) return await refuse(route, `the response of ${url.href} is larger than the limit`);
        const out = Object.fromEntries(
          Object.entries(res.headers).filter(([name]) => !DROPPED_RESPONSE_HEADERS.has(name)),
        );
        if (cookies.length) out['set-cookie'] = cookies.join('\n');
        return await route.fulfill({ status: res.status, headers: out, body: res.body });
      }
    } catch (err) {
      if (err instanceof BlockedAddressError) return refuse(route, err.message);
      await route.abort('failed').catch(() => undefined);
    }
  };
}
