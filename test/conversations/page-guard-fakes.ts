import type { Route } from 'playwright-core';
import { createPageGuard, type GuardState } from '@lib/browser-sessions/page-guard';
import { createOutboundClient, type OutboundClient } from '@lib/http/outbound';

/*
 * Chromium's side of the browser page guard in a unit test: a fake playwright Route that records what the guard
 * does with it, and a network that is a script of responses per URL (asked more than 30 times, it fails, so a
 * guard that never stops following redirects fails a test instead of hanging it). URLs are parsed by the real
 * outbound client.
 */

/** A scripted response of one URL, or the error requesting it throws. */
export type Scripted =
  { status: number; headers?: Record<string, string>; body?: string; truncated?: boolean } | Error;

export interface PageRequest {
  url: string;
  navigation?: boolean;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request the guard made through the outbound client (the body as text). */
export interface Sent {
  url: string;
  method: string;
  headers: Record<string, string> | undefined;
  body: string | undefined;
  limits: unknown;
}

const real = createOutboundClient({ allowPrivate: false });
after(() => real.close());

/** The outbound client with its parser, its requests answered from the script and recorded in `sent`. */
export function scriptedOutbound(script: Record<string, Scripted>, sent: Sent[]): OutboundClient {
  return {
    ...real,
    parse: (url) => real.parse(url),
    requestBytes(url, init, limits) {
      sent.push({ url, method: init.method, headers: init.headers, body: init.body?.toString(), limits });
      const scripted = script[url];
      if (sent.length > 30) return Promise.reject(new Error('the guard keeps asking'));
      if (!scripted) return Promise.reject(new Error(`nothing scripted for ${url}`));
      if (scripted instanceof Error) return Promise.reject(scripted);
      return Promise.resolve({
        status: scripted.status,
        headers: scripted.headers ?? {},
        body: Buffer.from(scripted.body ?? ''),
        truncated: scripted.truncated ?? false,
      });
    },
  };
}

/** A page's request as playwright routes it; the codes it is aborted with and the responses it is given. */
export function fakeRoute(request: PageRequest, aborted: (string | undefined)[], fulfilled: unknown[]) {
  return {
    request: () => ({
      url: () => request.url,
      isNavigationRequest: () => request.navigation ?? false,
      allHeaders: () => Promise.resolve(request.headers ?? {}),
      method: () => request.method ?? 'GET',
      postDataBuffer: () => (request.body === undefined ? null : Buffer.from(request.body)),
    }),
    abort: (code?: string) => {
      aborted.push(code);
      return Promise.resolve();
    },
    fulfill: (response: unknown) => {
      fulfilled.push(response);
      return Promise.resolve();
    },
  } as unknown as Route;
}

/** One request of the page through a new guard; what the guard asked of the network and did with the route. */
export async function guarded(
  request: PageRequest,
  script: Record<string, Scripted>,
  allowedHosts: string[] = ['shop.example.org'],
) {
  const sent: Sent[] = [];
  const aborted: (string | undefined)[] = [];
  const fulfilled: unknown[] = [];
  const state: GuardState = { allowedHosts, lastRefusal: null };
  await createPageGuard(scriptedOutbound(script, sent), state)(fakeRoute(request, aborted, fulfilled));
  return { sent, aborted, fulfilled, lastRefusal: state.lastRefusal };
}

/** The limits every request is made with: 30 s, 20 MiB of body. */
export const LIMITS = { timeoutMs: 30_000, maxBodyBytes: 20_971_520 };
/** A page a script answers with, and what the route is fulfilled with for it. */
export const ok: Scripted = { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>ok</p>' };
export const okPage = {
  status: 200,
  headers: { 'content-type': 'text/html' },
  body: Buffer.from('<p>ok</p>'),
};
export const offList = (host: string) => `${host} is not on the allow-list of the browse tool`;
