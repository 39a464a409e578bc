import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestAgent } from '@test/helpers/agents';
import type { TestEnv } from '@test/helpers/env';
import type { ChatRequest } from '@test/helpers/llm';
import { as, type TestOrg } from '@test/helpers/org';
import { connectClient } from '@test/helpers/realtime';
import { useWorkerAndOrg } from '@test/helpers/worker';
import { type SessionView, toolResults } from '@test/conversations/browser-site';

/**
 * The shared setup of the browser-session suites: a worker, a fresh 'Browser Org' per test, a small
 * test shop on 127.0.0.1 (`onRequest` sees each request's URL), and the session helpers. Call inside
 * a describe; `suite.env`/`suite.org`/`suite.site`/`suite.origin`/`suite.port` are set in the hooks,
 * the helpers read them when called.
 */
export function useBrowserSuite(onRequest: (url: URL) => void = () => {}) {
  const suite = useWorkerAndOrg('Browser Org') as { env: TestEnv; org: TestOrg } & {
    site: Server;
    origin: string;
    port: number;
  };

  before(async () => {
    suite.site = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.setHeader('content-type', 'text/html');
      if (url.pathname === '/')
        return res.end(
          `<title>Shop</title><h1>Welcome to the test shop</h1><input id="q">` +
            `<button id="go" onclick="location='/result?q='+encodeURIComponent(document.getElementById('q').value)">Go</button>`,
        );
      if (url.pathname === '/result')
        return res.end(`<title>Result</title><p id="r">You searched for ${url.searchParams.get('q')}</p>`);
      if (url.pathname === '/redirect') {
        res.statusCode = 302;
        res.setHeader('location', `http://localhost:${suite.port}/secret`);
        return res.end();
      }
      onRequest(url);
      res.end('secret');
    });
    await new Promise<void>((resolve) => suite.site.listen(0, '127.0.0.1', resolve));
    suite.port = (suite.site.address() as AddressInfo).port;
    suite.origin = `http://127.0.0.1:${suite.port}`;
  });
  after(() => suite.site.close());

  const sessionsPath = (conversationId: string, suffix = '') =>
    suite.org.path(`/conversations/${conversationId}/browser-sessions${suffix}`);

  async function browsingAgent(allowedHosts = ['127.0.0.1']) {
    const { env, org } = suite;
    const agent = await createTestAgent(env, org.organizationId);
    await as(env, org.admin.token)
      .post(org.path(`/agents/${agent.agentId}/tools`), {
        toolCode: 'browse',
        configuration: { allowedHosts },
      })
      .expect(201);
    return agent;
  }

  /**
   * Scripts the agent's model: one browse call per round (its arguments, or a function of the model request that
   * returns them), then a final answer.
   */
  function script(model: string, calls: Array<object | ((body: ChatRequest) => Promise<object>)>) {
    const { env } = suite;
    calls.forEach((args, i) => {
      const call = (a: object) => ({ toolCalls: [{ id: `call_b${i}`, name: 'browse', arguments: a }] });
      env.llm.on(
        { model },
        typeof args === 'function' ? async (body) => call(await args(body)) : call(args),
        1,
      );
    });
    let seen: Record<string, unknown>[] = [];
    env.llm.on(
      { model },
      (body) => {
        seen = toolResults(body);
        return { content: 'done' };
      },
      1,
    );
    return () => seen;
  }

  async function browserTask(agentId: string, isBrowserTask = true) {
    const { env, org } = suite;
    const client = await connectClient(env, org.organizationId, org.owner.token);
    try {
      const res = await as(env, org.owner.token)
        .post(org.path('/conversations'), { agentId, message: 'Find shoes', isBrowserTask })
        .expect(201);
      const { conversationId, requestId } = res.body as { conversationId: string; requestId: string };
      await client.waitFor((e) => e.payload.requestId === requestId && e.payload.type === 'message', 90_000);
      return conversationId;
    } finally {
      client.close();
    }
  }

  async function list(conversationId: string, token = suite.org.owner.token) {
    return (await as(suite.env, token).get(sessionsPath(conversationId)).expect(200)).body
      .browserSessions as SessionView[];
  }

  return { suite, sessionsPath, browsingAgent, script, browserTask, list };
}
