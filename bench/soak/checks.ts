/**
 * The end of the soak: everything an organization had accepted, read back as a whole through the API. Work still
 * in flight is waited for (up to `settleMs`); what never settles is reported as broken.
 */
import { workflowIds } from '@contracts';
import type { Deps } from '@lib/deps';
import type { SoakHttp } from './http';
import { until } from './ledger';
import type { Operations } from './operations';
import type { ChatClient } from './realtime';
import { APP_TABLE, ROWS_TABLE, type SoakOrg } from './setup';

export interface Invariant {
  name: string;
  ok: boolean;
  detail: string;
}

interface Page<T> {
  items: T[];
  totalRows: number;
}

const FINAL = new Set(['success', 'failed']);

export async function checkOrg(
  deps: Deps,
  http: SoakHttp,
  org: SoakOrg,
  owed: Operations['owed'],
  chat: ChatClient,
  settleMs: number,
): Promise<Invariant[]> {
  const { key, path } = org;
  /** Every item of a paged list (limit/cursor), newest first. */
  const all = async <T>(url: string): Promise<T[]> => {
    const items: T[] = [];
    for (let cursor = 0; ; cursor += 100) {
      const sep = url.includes('?') ? '&' : '?';
      const page = await http.json<Page<T>>('GET', path(`${url}${sep}limit=100&cursor=${cursor}`), key);
      items.push(...page.items);
      if (page.items.length < 100) return items;
    }
  };
  const runsOf = (chainId: string) =>
    all<{ runId: string; status: string; triggerType: string }>(`/chains/${chainId}/runs`);
  /** Waits until `probe` holds (its detail is reported either way). */
  const settle = async (name: string, probe: () => Promise<{ ok: boolean; detail: string }>) => {
    let last = { ok: false, detail: 'not checked' };
    try {
      await until(
        name,
        async () => {
          last = await probe();
          return last.ok ? true : undefined;
        },
        settleMs,
        2000,
      );
    } catch {
      // reported below with the last detail
    }
    return { name: `${org.name}: ${name}`, ...last };
  };
  const runsDone = (runs: Array<{ status: string }>, expected: number) => {
    const open = runs.filter((r) => !FINAL.has(r.status)).length;
    const failed = runs.filter((r) => r.status === 'failed').length;
    return {
      ok: runs.length === expected && open === 0 && failed === 0,
      detail: `${expected} accepted, ${runs.length} runs, ${open} not final, ${failed} failed`,
    };
  };

  const invariants: Invariant[] = [];
  invariants.push(
    await settle('each turn had one final event and one stored reply', () => {
      const counts = owed.turns.map((id) => chat.finals.get(id) ?? 0);
      const missing = counts.filter((c) => c === 0).length;
      const twice = counts.filter((c) => c > 1).length;
      return Promise.resolve({
        ok: missing === 0 && twice === 0,
        detail: `${owed.turns.length} accepted, ${missing} without a final event, ${twice} with more than one`,
      });
    }),
  );
  invariants.push(
    await settle('each chain run (fan-out) ran once and succeeded', async () => {
      const runs = await runsOf(org.fanOutChainId);
      const ids = new Set(runs.map((r) => r.runId));
      const unknown = owed.runs.filter((id) => !ids.has(id)).length;
      const r = runsDone(runs, owed.runs.length);
      return { ok: r.ok && unknown === 0, detail: `${r.detail}, ${unknown} accepted but not listed` };
    }),
  );
  invariants.push(
    await settle('each webhook delivery recorded once, dispatched, its handler run once', async () => {
      const deliveries = await all<{ eventId: string; status: string; handlers: number; duplicates: number }>(
        `/webhooks/${org.webhookId}/deliveries`,
      );
      const events = new Set(deliveries.map((d) => d.eventId));
      const lost = owed.events.filter((e) => !events.has(e)).length;
      const odd = deliveries.filter(
        (d) => d.status !== 'dispatched' || d.handlers !== 1 || d.duplicates !== 0,
      );
      const r = runsDone(await runsOf(org.hookChainId), owed.events.length);
      return {
        ok: deliveries.length === owed.events.length && lost === 0 && odd.length === 0 && r.ok,
        detail: `${owed.events.length} accepted, ${deliveries.length} recorded, ${lost} lost, ${odd.length} not dispatched once; handler runs: ${r.detail}`,
      };
    }),
  );
  invariants.push(
    await settle('each schedule fire started one run, which succeeded', async () => {
      const schedule = deps.temporal.client.schedule.getHandle(
        workflowIds.schedule(org.orgId, org.triggerId),
      );
      // A fire asked now is a workflow of its own, not one of the Schedule's actions (docs/schedules.md).
      const byCron = (await schedule.describe()).info.numActionsTaken;
      const fires = owed.firesAsked + byCron;
      const r = runsDone(await runsOf(org.scheduleChainId), fires);
      return {
        ok: r.ok,
        detail: `${owed.firesAsked} fired now + ${byCron} by cron = ${fires} fires; ${r.detail}`,
      };
    }),
  );
  invariants.push(
    await settle('each uploaded file READY', async () => {
      const files = await all<{ fileId: string; status: string }>(
        `/knowledgebases/${org.knowledgeBaseId}/files`,
      );
      const ready = files.filter((f) => f.status === 'READY').length;
      return {
        ok: files.length === owed.files.length && ready === files.length,
        detail: `${owed.files.length} accepted, ${files.length} listed, ${ready} READY`,
      };
    }),
  );
  const rowsOf = async (table: string) =>
    (await http.json<Page<unknown>>('GET', path(`/tables/${table}/data?limit=1`), key)).totalRows;
  invariants.push(
    await settle('each table write readable', async () => {
      const rows = await rowsOf(ROWS_TABLE);
      return { ok: rows === owed.rows, detail: `${owed.rows} written, ${rows} rows` };
    }),
  );
  invariants.push(
    await settle('each app bridge insert readable, each bridge run ran once', async () => {
      const rows = await rowsOf(APP_TABLE);
      const r = runsDone(await runsOf(org.appChainId), owed.appRuns.length);
      return {
        ok: rows === owed.appRows && r.ok,
        detail: `${owed.appRows} inserted, ${rows} rows; runs: ${r.detail}`,
      };
    }),
  );
  return invariants;
}
