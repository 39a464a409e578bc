// Scratch profile of webhook deliveries: Mongo commands per delivery (by collection and command, with time), and
// the Temporal histories of one delivery. `STACK_PORT_OFFSET=8000 node bench/run.mjs _whprofile`
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import mongoose from 'mongoose';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { workflowIds } from '@contracts';
import { createApp, createHttpServer } from '@api/app';
import { loadConfig } from '@lib/config';
import { createDeps } from '@lib/deps';
import { createLogger } from '@lib/logger';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import { startScriptedLlm } from '@test/helpers/llm';
import { startTestWorker } from '@test/helpers/worker';

const N = Number(process.env.DELIVERIES ?? 200);
const C = Number(process.env.CONCURRENCY ?? 20);
const stats = new Map<string, { n: number; ms: number; max: number }>();
const pending = new Map<number, string>();

function watch() {
  for (const c of mongoose.connections) {
    const client = c.getClient() as unknown as {
      on(e: string, f: (ev: Record<string, unknown>) => void): void;
      _watched?: boolean;
    };
    if (!client || client._watched) continue;
    client._watched = true;
    client.on('commandStarted', (ev) => {
      const cmd = ev.command as Record<string, unknown>;
      const name = ev.commandName as string;
      pending.set(ev.requestId as number, `${name} ${String(cmd[name])}`);
    });
    client.on('commandSucceeded', (ev) => {
      const key = pending.get(ev.requestId as number) ?? String(ev.commandName);
      pending.delete(ev.requestId as number);
      const s = stats.get(key) ?? { n: 0, ms: 0, max: 0 };
      s.n++;
      s.ms += ev.duration as number;
      s.max = Math.max(s.max, ev.duration as number);
      stats.set(key, s);
    });
  }
}

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  console.log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
  );
  const llm = await startScriptedLlm();
  llm.setDefault({ content: '{"ok": "yes"}' });
  const config = loadConfig({
    ...process.env,
    MONGODB_URI: `${process.env.MONGODB_URI}${process.env.MONGODB_URI?.includes('?') ? '&' : '?'}monitorCommands=true`,
    OPENAI_BASE_URL: llm.baseURL,
    OPENAI_API_KEY: llm.apiKey,
    TEMPORAL_TASK_QUEUE: `bench-whp-${randomBytes(4).toString('hex')}`,
    WEBHOOK_RATE_LIMIT_PER_MINUTE: String(1_000_000),
  });
  const deps = await createDeps(config, { logger: createLogger('silent') });
  await startTestWorker({ config });
  const boot = await bootstrapOrganization(deps.repos, deps.tokens, {
    orgName: 'P',
    email: `p-${randomBytes(4).toString('hex')}@example.test`,
    name: 'P',
  });
  const org = boot.organizationId;
  const ctx = { organizationId: org, userId: boot.userId } as Parameters<
    typeof deps.services.chains.create
  >[0];
  const chain = await deps.services.chains.create(ctx, {
    name: 'B',
    description: 'one step',
    llmInstructions: 'Be brief.',
    steps: [{ stepOrder: 1, instructions: 'Say ok to {{input.n}}' }],
  });
  const webhook = await deps.services.webhooks.create(ctx, { name: 'B' });
  await deps.services.webhookHandlers.create(ctx, webhook.webhookId, {
    handlerType: 'action-chain',
    actionChainId: chain.actionChainId,
    instructions: 'Run',
    inputMapping: { n: '{{body.n}}' },
  });
  const server = createHttpServer(createApp(deps));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orgs/${org}/webhooks/${webhook.webhookId}/execute`;
  watch();
  stats.clear();
  const session = new Session();
  session.connect();
  const post = (m: string) =>
    new Promise<unknown>((res, rej) => session.post(m, (e, r) => (e ? rej(e) : res(r))));
  if (process.env.CPU_PROFILE) {
    await post('Profiler.enable');
    await post('Profiler.start');
  }
  const t = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) {
        const i = next++;
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': `evt-${i}` },
          body: JSON.stringify({ n: i }),
        });
        await res.arrayBuffer();
      }
    }),
  );
  const accepted = (performance.now() - t) / 1000;
  const wh = deps.repos.tenant(org).webhooks;
  const log = await wh.listDeliveries(webhook.webhookId, { limit: N, offset: 0 });
  const ids = (log.items as { _id: string }[]).map((d) => d._id);
  for (const id of ids)
    await deps.temporal.client.workflow
      .getHandle(workflowIds.webhookDelivery(org, webhook.webhookId, id))
      .result();
  for (;;) {
    const runs = await deps.repos.tenant(org).chainRuns.list(chain.actionChainId, {
      limit: 1000,
      offset: 0,
      orderBy: 'created_at',
      descending: false,
    });
    if (runs.items.filter((r) => r.status === 'success' || r.status === 'failed').length >= N) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const done = (performance.now() - t) / 1000;
  console.log(
    `accepted ${(N / accepted).toFixed(1)}/s, completed ${(N / done).toFixed(1)}/s (${done.toFixed(1)} s)`,
  );
  if (process.env.CPU_PROFILE) {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    writeFileSync(process.env.CPU_PROFILE, JSON.stringify(profile));
  }
  const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
  let total = 0;
  for (const [k, s] of rows) {
    total += s.n;
    console.log(
      `${(s.n / N).toFixed(2).padStart(6)}/dlv ${s.ms.toFixed(0).padStart(7)} ms avg ${(s.ms / s.n).toFixed(1).padStart(6)} max ${s.max.toFixed(0).padStart(5)}  ${k}`,
    );
  }
  console.log(`mongo commands per delivery: ${(total / N).toFixed(1)}`);
  const wfId = workflowIds.webhookDelivery(org, webhook.webhookId, ids[0]!);
  const list = deps.temporal.client.workflow.list({
    query: `WorkflowId STARTS_WITH "${wfId}" OR WorkflowType = "chainRunWorkflow"`,
  });
  const seen: string[] = [];
  for await (const w of list) {
    if (seen.length > 3) break;
    seen.push(w.workflowId);
  }
  for (const id of [wfId, ...seen.filter((s) => s !== wfId).slice(0, 2)]) {
    const h = await deps.temporal.client.workflow.getHandle(id).fetchHistory();
    const types = (h.events ?? []).map((e) => String(e.eventType ?? '').replace('EVENT_TYPE_', ''));
    console.log(
      `${id}: ${types.length} events, WFT ${types.filter((x) => x === 'WORKFLOW_TASK_COMPLETED' || x === '6').length}`,
    );
    console.log('  ' + (h.events ?? []).map((e) => e.eventType).join(' '));
  }
  console.log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')}`,
  );
  process.exit(0);
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
