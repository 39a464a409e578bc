/**
 * One organization's operations, each as a client does it over HTTP (and socket.io for turns), each followed to
 * its final state through the API. What was accepted is remembered in `owed`, which the end of the soak checks
 * again as a whole (bench/soak/checks.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Deps } from '@lib/deps';
import { HttpError, type SoakHttp } from './http';
import { Refused, until } from './ledger';
import { turnReply } from './model';
import type { ChatClient } from './realtime';
import { APP_TABLE, ROWS_TABLE, type SoakOrg } from './setup';

/** How long one piece of work may take to reach its final state before the soak calls it lost. */
const FINISH_MS = 180_000;
const APP_LINK_REFRESH_MS = 20 * 60_000;

interface Run {
  status: string;
  statusMessage: string | null;
  state: Record<string, unknown>;
}

export function operationsOf(deps: Deps, http: SoakHttp, org: SoakOrg, chat: ChatClient) {
  const tag = `${org.name.replace(/\W/g, '')}-${randomBytes(3).toString('hex')}`;
  let n = 0;
  const owed = {
    turns: [] as string[],
    runs: [] as string[],
    events: [] as string[],
    files: [] as string[],
    rows: 0,
    appRows: 0,
    appRuns: [] as string[],
    firesAsked: 0,
  };
  const { key, path } = org;
  /** The answer of the starting request: 429 is a refusal, anything else but `expected` a failure. */
  const start = async <T>(
    method: 'POST',
    url: string,
    token: string | null,
    body: unknown,
    expected: number,
  ) => {
    const res = await http.call(method, url, token, body);
    if (res.status === 429) throw new Refused();
    if (res.status !== expected) throw new HttpError(res.status, res.body, `${method} ${url.split('?')[0]}`);
    return res.json<T>();
  };
  const runEnded = (chainId: string, runId: string) =>
    until(
      `run ${runId}`,
      async () => {
        const run = await http.json<Run>('GET', path(`/chains/${chainId}/runs/${runId}`), key);
        return run.status === 'success' || run.status === 'failed' ? run : undefined;
      },
      FINISH_MS,
    );
  const succeeded = (run: Run, what: string) => {
    if (run.status !== 'success') throw new Error(`${what} ${run.status}: ${run.statusMessage}`);
  };
  let appToken = { token: '', at: 0 };
  const appLink = async () => {
    if (Date.now() - appToken.at > APP_LINK_REFRESH_MS)
      appToken = { token: await org.openApp(), at: Date.now() };
    return appToken.token;
  };

  return {
    owed,

    turn: async (accept: () => void) => {
      const requestId = `soak-${tag}-${n++}`;
      const message = `turn ${requestId}`;
      const final = chat.expect(requestId, FINISH_MS);
      let created: { conversationId: string };
      try {
        created = await start(
          'POST',
          path('/conversations'),
          key,
          { agentId: org.agentId, message, requestId },
          201,
        );
      } catch (err) {
        final.cancel();
        throw err;
      }
      owed.turns.push(requestId);
      accept();
      const got = await final.result;
      const reply = turnReply(message);
      if (got.type !== 'message' || got.status !== 'complete')
        throw new Error(`turn ${requestId}: ${got.type} ${got.status} ${got.text}`);
      if (got.streamed !== reply || got.text !== reply)
        throw new Error(
          `turn ${requestId}: streamed ${JSON.stringify(got.streamed)}, final ${JSON.stringify(got.text)}`,
        );
      const conversation = await http.json<{
        messages: Array<{ role: string; requestId: string; content: Array<{ text: string }> }>;
      }>('GET', path(`/conversations/${created.conversationId}`), key);
      const stored = conversation.messages.filter((m) => m.role === 'assistant' && m.requestId === requestId);
      if (stored.length !== 1 || stored[0]!.content.map((c) => c.text).join('') !== reply)
        throw new Error(`turn ${requestId}: stored replies ${JSON.stringify(stored)}`);
    },

    chainRun: async (accept: () => void) => {
      const i = n++;
      const items = [`a${i}`, `b${i}`, `c${i}`];
      const { runId } = await start<{ runId: string }>(
        'POST',
        path(`/chains/${org.fanOutChainId}/run`),
        key,
        { payload: { items } },
        202,
      );
      owed.runs.push(runId);
      accept();
      const run = await runEnded(org.fanOutChainId, runId);
      succeeded(run, `run ${runId}`);
      if (JSON.stringify(run.state.x) !== JSON.stringify(items.map((x) => x.toUpperCase())))
        throw new Error(`run ${runId}: fan-out output ${JSON.stringify(run.state.x)}`);
    },

    delivery: async (accept: () => void) => {
      const eventId = `soak-${tag}-${n++}`;
      const res = await http.call(
        'POST',
        path(`/webhooks/${org.webhookId}/execute`),
        null,
        { text: eventId },
        {
          'Idempotency-Key': eventId,
        },
      );
      if (res.status === 429) throw new Refused();
      if (res.status !== 200) throw new HttpError(res.status, res.body, 'execute');
      owed.events.push(eventId);
      accept();
      const hooks = path(`/webhooks/${org.webhookId}/deliveries`);
      // One delivery client per organization: its delivery is among the newest.
      const { deliveryId } = await until(
        `delivery ${eventId}`,
        async () =>
          (
            await http.json<{ items: Array<{ deliveryId: string; eventId: string }> }>(
              'GET',
              `${hooks}?limit=20`,
              key,
            )
          ).items.find((d) => d.eventId === eventId),
        FINISH_MS,
      );
      const detail = await until(
        `delivery ${eventId} handled`,
        async () => {
          const d = await http.json<{
            status: string;
            handlerRuns: Array<{ status: string; statusMessage: string | null }>;
          }>('GET', `${hooks}/${deliveryId}`, key);
          const done = d.handlerRuns.length === 1 && ['success', 'failed'].includes(d.handlerRuns[0]!.status);
          return d.status === 'dispatched' && done ? d : undefined;
        },
        FINISH_MS,
      );
      if (detail.handlerRuns[0]!.status !== 'success')
        throw new Error(`delivery ${eventId}: handler ${JSON.stringify(detail.handlerRuns[0])}`);
    },

    scheduleFire: async (accept: () => void) => {
      const runsOf = async () =>
        await http.json<{ totalRows: number; items: Run[] }>(
          'GET',
          path(`/chains/${org.scheduleChainId}/runs?limit=1`),
          key,
        );
      const before = (await runsOf()).totalRows;
      // What `npm run cli -- schedule fire` does: trigger the trigger's Temporal Schedule now.
      if (!(await deps.services.scheduleSync.fireNow(org.orgId, org.triggerId)))
        throw new Error('no such trigger');
      owed.firesAsked++;
      accept();
      const newest = await until(
        `schedule fire of ${org.triggerId}`,
        async () => {
          const page = await runsOf();
          const run = page.items[0];
          return page.totalRows > before && run && ['success', 'failed'].includes(run.status)
            ? run
            : undefined;
        },
        FINISH_MS,
      );
      succeeded(newest, 'schedule run');
    },

    file: async (accept: () => void) => {
      const i = n++;
      const created = await start<{ fileId: string; uploadUrl: string }>(
        'POST',
        path(`/knowledgebases/${org.knowledgeBaseId}/files/upload-url`),
        key,
        { fileName: `soak-${i}.txt`, contentType: 'text/plain' },
        201,
      );
      owed.files.push(created.fileId);
      accept();
      const put = await fetch(created.uploadUrl, {
        method: 'PUT',
        headers: { 'Content-Type': 'text/plain' },
        body: `Soak file ${i} of ${org.name}.\nIt says that the soak keeps running and nothing is lost.\n`,
      });
      if (put.status !== 200) throw new Error(`PUT upload: ${put.status} ${await put.text()}`);
      const file = await until(
        `file ${created.fileId}`,
        async () => {
          const f = await http.json<{ status: string; statusMessage: string | null }>(
            'GET',
            path(`/knowledgebases/${org.knowledgeBaseId}/files/${created.fileId}`),
            key,
          );
          return f.status === 'READY' || f.status === 'ERROR' ? f : undefined;
        },
        FINISH_MS,
      );
      if (file.status !== 'READY')
        throw new Error(`file ${created.fileId}: ${file.status} ${file.statusMessage}`);
    },

    tableWrite: async (accept: () => void) => {
      const i = n++;
      const row = await start<{ id: number }>(
        'POST',
        path(`/tables/${ROWS_TABLE}/data`),
        key,
        { data: { n: i, note: tag } },
        201,
      );
      owed.rows++;
      accept();
      const read = await http.json<{ items: Array<{ id: number; n: number }> }>(
        'GET',
        path(`/tables/${ROWS_TABLE}/data?filters=${encodeURIComponent(`n:eq:${i}:and`)}`),
        key,
      );
      if (read.items.length !== 1 || read.items[0]!.id !== row.id)
        throw new Error(`row ${row.id} (n ${i}) read back as ${JSON.stringify(read.items)}`);
    },

    /** An app's bridge calls as its page makes them: insert a row, query it back, run its workflow. */
    appBridge: async (accept: () => void) => {
      const i = n++;
      const token = await appLink();
      const bridge = path(`/artifacts/${org.artifactId}/app`);
      const inserted = await start<{ ids: number[]; errors: unknown[] }>(
        'POST',
        `${bridge}/tables/${APP_TABLE}/rows`,
        token,
        { rows: [{ n: i, note: 'app' }] },
        200,
      );
      if (inserted.ids.length !== 1) throw new Error(`bridge insert: ${JSON.stringify(inserted)}`);
      owed.appRows++;
      const { runId } = await start<{ runId: string }>(
        'POST',
        `${bridge}/workflows/${org.appChainId}/runs`,
        token,
        { input: { message: `app ${i}` }, requestId: `soak-${tag}-${i}` },
        202,
      );
      owed.appRuns.push(runId);
      accept();
      const read = await http.json<{ items: Array<{ id: number }> }>(
        'GET',
        `${bridge}/tables/${APP_TABLE}/rows?filters=${encodeURIComponent(`n:eq:${i}:and`)}`,
        token,
      );
      if (read.items.length !== 1 || read.items[0]!.id !== inserted.ids[0])
        throw new Error(`bridge row ${inserted.ids[0]} read back as ${JSON.stringify(read.items)}`);
      succeeded(await runEnded(org.appChainId, runId), `app run ${runId}`);
    },
  };
}

export type Operations = ReturnType<typeof operationsOf>;
