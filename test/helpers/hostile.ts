import type { ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { createTestAgent } from './agents';
import { startApiProcess, type ApiProcess } from './api-process';
import type { TestEnv } from './env';
import { lastUserText } from './llm';
import { as, createTestOrg, type TestOrg } from './org';
import { eventually } from './wait';
import { startWorkerProcess, stopProcess } from './worker-process';

/** How long `/healthz` may take on a loaded two-core CI machine before the API counts as frozen. */
const HEALTH_BOUND_MS = 2_000;

export interface HealthRecord {
  probes: number;
  /** Probes that did not answer 200 within the bound, with what happened instead. */
  misses: string[];
}

/**
 * The service as it ships for a hostile-input case: the API and the worker each in its own process (so a frozen
 * event loop or a crashed worker shows), on the test stack, with an organization that is not the attacker's.
 */
export interface HostileStack {
  /** The test env with `app` pointing at the API process, for the `as()` and kb helpers. */
  env: TestEnv;
  api: ApiProcess;
  worker: ChildProcess;
  bystander: TestOrg;
  /**
   * Runs `attack` while probing `/healthz` and while the bystander organization chats; asserts the API answered
   * every probe within the bound, the bystander's turn was answered, and the worker (same pid) is still alive.
   */
  survives<T>(attack: () => Promise<T>): Promise<T>;
  stop(): Promise<void>;
}

const rejectAfter = (ms: number, message: string) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms).unref());

/** Probes `/healthz` back to back until `stop()` resolves the record. */
function watchHealth(url: string) {
  const record: HealthRecord = { probes: 0, misses: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = Date.now();
      try {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTH_BOUND_MS) });
        await res.arrayBuffer();
        if (res.status !== 200) record.misses.push(`status ${res.status}`);
      } catch (err) {
        record.misses.push(`${(err as Error).name} after ${Date.now() - started} ms`);
      }
      record.probes++;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return async () => {
    running = false;
    await loop;
    return record;
  };
}

export async function startHostileStack(
  base: TestEnv,
  apiEnv: NodeJS.ProcessEnv = {},
): Promise<HostileStack> {
  const worker = startWorkerProcess(base);
  const api = await startApiProcess(base, apiEnv);
  // supertest takes a URL as well as an app: every helper then talks to the API process.
  const env = { ...base, app: api.url as unknown as TestEnv['app'] };
  const bystander = await createTestOrg(base, 'Bystander Org');
  const { agentId, model } = await createTestAgent(base, bystander.organizationId);
  const pid = worker.pid;

  /** One turn of the bystander, start to stored reply. */
  const bystanderTurn = async (text: string) => {
    // Scripted per turn: the suite's root hook makes the scripted model forget its rules after every test.
    base.llm.on({ model }, (body) => ({ content: `Still here: ${lastUserText(body)}` }));
    const res = await as(env, bystander.owner.token)
      .post(bystander.path('/conversations'), { agentId, message: text })
      .expect(201);
    const id = res.body.conversationId as string;
    await eventually(async () => {
      const conv = await as(env, bystander.owner.token).get(bystander.path(`/conversations/${id}`));
      const messages = conv.body.messages as Array<{ role: string; content: Array<{ text: string }> }>;
      return messages.some((m) => m.role === 'assistant' && m.content[0]?.text === `Still here: ${text}`);
    }, 120_000);
  };

  return {
    env,
    api,
    worker,
    bystander,
    async survives(attack) {
      const stopWatching = watchHealth(api.url);
      try {
        // The deadline only bounds how long a frozen service keeps a failing case waiting.
        const [result] = await Promise.all([
          Promise.race([attack(), rejectAfter(300_000, 'the attack got no answer')]),
          bystanderTurn(`hello ${Date.now()}`),
        ]);
        return result;
      } finally {
        const health = await stopWatching();
        const missed = `${health.misses.length} of ${health.probes} /healthz probes missed ${HEALTH_BOUND_MS} ms`;
        expect(health.misses.length, `${missed}: ${health.misses.slice(0, 3).join('; ')}`).to.equal(0);
        expect(worker.exitCode, 'worker exit code').to.equal(null);
        expect(worker.signalCode, 'worker signal').to.equal(null);
        expect(worker.pid).to.equal(pid);
        expect(api.child.exitCode, 'api exit code').to.equal(null);
      }
    },
    async stop() {
      // A process whose event loop a failed case froze never handles SIGTERM.
      const killLater = setTimeout(() => [api.child, worker].forEach((p) => p.kill('SIGKILL')), 30_000);
      await Promise.all([api.stop(), stopProcess(worker)]);
      clearTimeout(killLater);
    },
  };
}
