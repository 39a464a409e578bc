// What the browser-session tests (browser-sessions, browser-session-limits) read about sessions and Chromium.
import { readdirSync, readFileSync } from 'node:fs';
import { SESSION_SWITCH } from '@lib/browser-sessions/browser-pool';
import type { ChatRequest } from '@test/helpers/llm';

export interface SessionView {
  sessionId: string;
  status: string;
  endReason: string | null;
  currentUrl: string | null;
  owner: Record<string, string>;
  screenshots: Array<{ screenshotId: string; downloadUrl: string; pageUrl: string }>;
}

/** The ids of the running processes whose command line names the session (its Chromium). */
export function browserPids(sessionId: string): number[] {
  const marker = `${SESSION_SWITCH}=${sessionId}`;
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes(marker);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);
}

/** The JSON results of the browse calls the model has been shown so far. */
export const toolResults = (body: ChatRequest) =>
  body.messages
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.parse((m as { content: string }).content) as Record<string, unknown>);
