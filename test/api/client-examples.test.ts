import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { tableWithRows } from '@test/helpers/artifacts';
import { answerSupportTriage } from '@test/helpers/chains';
import { createScriptedAgent, useClientAndOrg } from '@test/helpers/client';
import { ROOT } from '@test/helpers/paths';

/** A loopback port nothing listens on (one the system just handed out and took back). */
function closedPort() {
  return new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// The examples (examples/*.ts, run with tsx as docs/client.md says) against the running service: what a new user
// copies works, on the client generated from the contract.
describe('examples: one per feature area, on the generated client', function () {
  this.timeout(180_000);
  const suite = useClientAndOrg('Examples Org');

  /** Runs `npx tsx examples/<name>.ts --org … --token <owner> …args` against the test API; resolves when it exits. */
  function example(name: string, ...args: string[]) {
    return exampleAt(suite.baseUrl, name, ...args);
  }

  /** `example`, with BASE_URL set to `baseUrl`. */
  function exampleAt(baseUrl: string, name: string, ...args: string[]) {
    const { org } = suite;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(ROOT, `examples/${name}.ts`),
        '--org',
        org.organizationId,
        '--token',
        org.owner.token,
        ...args,
      ],
      { cwd: ROOT, env: { ...process.env, BASE_URL: baseUrl } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('close', (code) => resolve({ code, stdout, stderr })),
    );
  }

  /** The output of an example that succeeded. */
  async function output(name: string, ...args: string[]) {
    const { code, stdout, stderr } = await example(name, ...args);
    expect(code, stderr).to.equal(0);
    return stdout;
  }

  it('chat-client streams the reply of the agent to stdout and ends on the final event', async () => {
    const agent = await createScriptedAgent(suite, {
      content: 'Hello from the agent.',
      chunks: ['Hello ', 'from ', 'the agent.'],
    });
    const stdout = await output('chat-client', '--agent', agent.id, 'Hello!');
    expect(stdout).to.match(/^Hello from the agent\.\n\n\[message\] conversation \S+\n$/);
  });

  it('chat-client names the missing options and exits 2', async () => {
    const { code, stderr } = await example('chat-client', 'Hello!');
    expect(code).to.equal(2);
    expect(stderr).to.contain('--agent AGENT');
  });

  it('chat-client says plainly when nothing answers at its URL, and --url wins over BASE_URL', async () => {
    const closed = await closedPort();
    const nowhere = `http://127.0.0.1:${closed}`;
    const refused = await exampleAt(nowhere, 'chat-client', '--agent', 'default-assistant', 'Hello!');
    expect(refused.code).to.equal(1);
    expect(refused.stderr.trim()).to.equal(
      `cannot reach the API at ${nowhere}: is \`npm start\` running there? (set BASE_URL or pass --url)`,
    );
    const agent = await createScriptedAgent(suite, { content: 'Found you.' });
    const found = await exampleAt(nowhere, 'chat-client', '--url', suite.baseUrl, '--agent', agent.id, 'Hi');
    expect(found.code, found.stderr).to.equal(0);
    expect(found.stdout).to.match(/^Found you\.\n/);
  });

  it('tables creates a table, reports the refused batch row by index and lists the filtered rows', async () => {
    const stdout = await output('tables');
    expect(stdout).to.contain('inserted 2, refused');
    expect(stdout).to.contain('index: 1');
    expect(stdout).to.match(/1 order\(s\) of 20 or more:[\s\S]*customer: 'Ada'/);
  });

  it('knowledge-base uploads a file, waits for READY and finds its text', async () => {
    const file = join(tmpdir(), `lease-${randomBytes(4).toString('hex')}.txt`);
    await writeFile(file, 'The tenant pays rent on the first day of each month.');
    const stdout = await output('knowledge-base', '--file', file, 'when is the rent due');
    expect(stdout).to.contain('READY\n');
    expect(stdout).to.contain(': The tenant pays rent on the first day of each month.');
  });

  it('chains runs a two-step chain to success and prints its final state', async () => {
    answerSupportTriage(suite.env);
    const stdout = await output('chains', 'My invoice is wrong.');
    expect(stdout).to.match(/^success/);
    expect(stdout).to.contain("category: 'billing'");
    expect(stdout).to.contain("reply: 'We will correct the invoice.'");
  });

  it('webhooks executes a new webhook without credentials and lists the delivery', async () => {
    const { org } = suite;
    const agent = await createScriptedAgent(suite, { content: 'Two mugs.' });
    const stdout = await output('webhooks', '--agent', agent.id);
    const [url, ...deliveries] = stdout.trim().split('\n');
    expect(url).to.match(
      new RegExp(`^the shop posts to \\S+/orgs/${org.organizationId}/webhooks/\\S+/execute$`),
    );
    expect(deliveries).to.have.length(1);
    expect(deliveries[0]).to.match(/^whd_\S+ \S+ \d{4}-\d\d-\d\dT/);
  });

  it('schedules creates a trigger with an agent handler and prints its next run', async () => {
    const agent = await createScriptedAgent(suite, { content: 'Good morning.' });
    const stdout = await output('schedules', '--agent', agent.id);
    expect(stdout).to.contain('Morning briefing: each fire opens a conversation with Client agent');
    expect(stdout).to.match(/next run \d{4}-\d\d-\d\dT07:30:00(\.000)?Z, last run null/);
  });

  it('apps pins and approves an App, opens it and reads its declared table through the bridge', async () => {
    const { env, org } = suite;
    await tableWithRows(env, org, 'leads', ['Ada']);
    const stdout = await output('apps', '--table', 'leads');
    expect(stdout).to.match(
      new RegExp(`open the app at \\S+/orgs/${org.organizationId}/artifacts/\\S+/app\\?session=`),
    );
    expect(stdout).to.match(/1 row\(s\):[\s\S]*title: 'Ada'/);
  });
});
