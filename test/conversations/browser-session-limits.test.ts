import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { workflowIds } from '@contracts';
import { BrowserSessionsService } from '@lib/browser-sessions/browser-sessions.service';
import { createRunnableChain, finished, startRun } from '@test/helpers/chains';
import type { TestEnv } from '@test/helpers/env';
import { recordHistory } from '@test/helpers/histories';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { useBrowserSuite } from '@test/conversations/browser-suite';
import { type SessionView, browserPids, toolResults } from '@test/conversations/browser-site';

describe('browser sessions', function () {
  this.timeout(120_000);
  const { suite, sessionsPath, browsingAgent, script, browserTask, list } = useBrowserSuite();
  let env: TestEnv;
  let org: TestOrg;
  let origin: string;
  beforeEach(() => {
    ({ env, org, origin } = suite);
  });

  it('limits active sessions per organization (429), refuses non-browser tasks (409), bad input (400) and other organizations (404)', async () => {
    const { agentId } = await browsingAgent();
    const created = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId, isBrowserTask: true })
      .expect(201);
    const conversationId = created.body.conversationId as string;
    const max = env.config.browser.maxPerOrg;
    const ids: string[] = [];
    for (let i = 0; i < max; i++) {
      const res = await as(env, org.owner.token).post(sessionsPath(conversationId)).expect(201);
      expect(res.body).to.include({ status: 'active', endReason: null });
      ids.push(res.body.sessionId as string);
    }
    const refused = await as(env, org.owner.token).post(sessionsPath(conversationId)).expect(429);
    expect(refused.body.error.code).to.equal('browser_session_limit');
    expect(refused.headers['retry-after']).to.match(/^\d+$/);

    // Another organization sees none of it.
    const other = await createTestOrg(env, 'Other Browser Org');
    const foreign = `/orgs/${other.organizationId}/conversations/${conversationId}/browser-sessions`;
    await as(env, other.owner.token).get(foreign).expect(404);
    await as(env, other.owner.token).post(foreign).expect(404);
    await as(env, other.owner.token).post(`${foreign}/${ids[0]}/stop`).expect(404);
    await as(env, org.owner.token).post(sessionsPath(conversationId, '/bws_nope/stop')).expect(404);

    // A stopped session frees its slot.
    await as(env, org.owner.token)
      .post(sessionsPath(conversationId, `/${ids[0]}/stop`))
      .expect(200);
    const next = await as(env, org.owner.token).post(sessionsPath(conversationId)).expect(201);
    ids.push(next.body.sessionId as string);

    const plain = await as(env, org.owner.token).post(org.path('/conversations'), { agentId }).expect(201);
    const notBrowser = await as(env, org.owner.token)
      .post(sessionsPath(plain.body.conversationId as string))
      .expect(409);
    expect(notBrowser.body.error.code).to.equal('not_a_browser_task');

    await as(env, org.owner.token)
      .post(sessionsPath(conversationId, `/${'x'.repeat(101)}/stop`))
      .expect(400);
    await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId, isBrowserTask: 'yes' })
      .expect(400);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agentId}/tools`), {
        toolCode: 'browse',
        configuration: { allowedHosts: ['http://x/'] },
      })
      .expect(400);
    await as(env, org.owner.token)
      .get(org.path('/chains/chn_nope/runs/run_nope/browser-sessions'))
      .expect(404);

    // Deleting the conversation ends its sessions and their browsers.
    await eventually(() => browserPids(ids.at(-1)!).length > 0);
    await as(env, org.owner.token)
      .delete(org.path(`/conversations/${conversationId}`))
      .expect(200);
    const ended = await env.deps.repos.tenant(org.organizationId).browserSessions.listForOwner({
      type: 'conversation',
      conversationId,
    });
    expect(ended.filter((s) => s.status === 'active')).to.be.empty;
    expect(ended.filter((s) => s.endReason === 'owner_ended')).to.have.length(max);
    await eventually(() => ids.every((id) => browserPids(id).length === 0));
  });

  it('fails a session whose Chromium dies: the action tells the model, the session ends failed', async () => {
    const { agentId, model } = await browsingAgent();
    let sessionId = '';
    const results = script(model, [
      { action: 'navigate', url: `${origin}/` },
      // After the first action Chromium is killed (a crash); the model then asks for the page's text.
      async (body) => {
        sessionId = toolResults(body)[0]!.sessionId as string;
        const pids = browserPids(sessionId);
        expect(pids).to.not.be.empty;
        for (const pid of pids) process.kill(pid, 'SIGKILL');
        await eventually(() => pids.every((pid) => !existsSync(`/proc/${pid}`)));
        return { action: 'read_text' };
      },
    ]);
    const conversationId = await browserTask(agentId);

    const seen = results();
    expect(seen).to.have.length(2);
    expect(seen[0]).to.include({ ok: true });
    expect(seen[1]).to.include({ ok: false });
    expect(seen[1]!.error).to.match(/^the browser session failed: /);
    const [session] = await list(conversationId);
    expect(session).to.include({ sessionId, status: 'failed' });
    expect(session!.endReason).to.match(/^browser_failed: /);
    await recordHistory(
      env,
      workflowIds.browserSession(org.organizationId, sessionId),
      'browser-session-failed',
    );
  });

  it('expires an idle session and ends its browser', async () => {
    const { agentId } = await browsingAgent();
    const created = await as(env, org.owner.token)
      .post(org.path('/conversations'), { agentId, isBrowserTask: true })
      .expect(201);
    const conversationId = created.body.conversationId as string;
    // The same service with a one-second idle timeout (the configured minimum is 10 s).
    const service = new BrowserSessionsService(
      env.deps.repos,
      env.deps.services.conversations,
      env.deps.services.chainRuns,
      env.deps.temporal,
      env.deps.objects,
      { maxPerOrg: 3, idleTimeoutSeconds: 1 },
    );
    const ctx = {
      organizationId: org.organizationId,
      userId: org.owner.userId,
      role: 'owner' as const,
      capabilities: new Set<never>(),
      via: 'session' as const,
    };
    const session = await service.create(ctx, conversationId);
    const expired = await eventually(async () => {
      const [s] = await list(conversationId);
      return s?.status === 'expired' ? s : undefined;
    });
    expect(expired).to.include({ sessionId: session.sessionId, endReason: 'idle_timeout' });
    await eventually(() => browserPids(session.sessionId).length === 0);
  });

  it('gives a chain run a browser for its steps, lists it under the run and ends it with the run', async () => {
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, name: 'Look', instructions: 'Read the shop' },
    ]);
    await as(env, org.admin.token)
      .post(org.path(`/chains/${chain.chainId}/steps/${chain.stepIds[0]}/tools`), {
        toolCode: 'browse',
        config: { allowedHosts: ['127.0.0.1'] },
      })
      .expect(201);
    let seen: Record<string, unknown>[] = [];
    chain.answer((body) => {
      seen = toolResults(body);
      if (seen.length === 0)
        return {
          toolCalls: [{ id: 'c1', name: 'browse', arguments: { action: 'navigate', url: `${origin}/` } }],
        };
      if (seen.length === 1)
        return {
          toolCalls: [{ id: 'c2', name: 'browse', arguments: { action: 'read_text', selector: 'h1' } }],
        };
      return { content: 'read it' };
    });
    const { runId } = await startRun(env, org, chain.chainId);
    const run = await finished(env, org, chain.chainId, runId);
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    expect(seen[1]).to.include({ ok: true, text: 'Welcome to the test shop' });
    const res = await as(env, org.chat.token)
      .get(org.path(`/chains/${chain.chainId}/runs/${runId}/browser-sessions`))
      .expect(200);
    const sessions = res.body.browserSessions as SessionView[];
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.deep.include({
      status: 'stopped',
      endReason: 'owner_ended',
      owner: { type: 'chain_run', actionChainId: chain.chainId, runId },
    });
    await eventually(() => browserPids(sessions[0]!.sessionId).length === 0);
  });
});
