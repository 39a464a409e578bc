import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { workflowIds } from '@contracts';
import { createRunnableChain, finished, startRun } from '@test/helpers/chains';
import { testEnv } from '@test/helpers/env';
import type { ChatRequest } from '@test/helpers/llm';
import { createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { startWorkerProcess } from '@test/helpers/worker-process';

const out = (name: string) => ({
  type: 'object',
  properties: { [name]: { type: 'string' } },
  required: [name],
});
const stepText = (body: ChatRequest) => body.messages[1]?.content as string;

describe('a worker killed in the middle of a chain run', () => {
  const workers: ChildProcess[] = [];
  after(() => workers.forEach((w) => w.kill('SIGKILL')));

  it('is replaced by another worker; the run finishes once and finished steps are not asked again', async function () {
    this.timeout(180_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'Chain Crash Org');
    const chain = await createRunnableChain(env, org, [
      { stepOrder: 1, instructions: 'one', outputSchema: out('a') },
      { stepOrder: 2, instructions: 'two', outputSchema: out('b') },
      { stepOrder: 3, instructions: 'three', outputSchema: out('c') },
    ]);
    let stuck = true;
    chain.answer(async (body) => {
      const text = stepText(body);
      // The first worker's call of step 2 never gets an answer: the worker dies waiting for it.
      if (text === 'two' && stuck) await new Promise(() => undefined);
      return { content: JSON.stringify({ [text === 'one' ? 'a' : text === 'two' ? 'b' : 'c']: text }) };
    });
    const first = startWorkerProcess(env);
    workers.push(first);
    const { runId } = await startRun(env, org, chain.chainId);
    await eventually(() => chain.calls().some((b) => stepText(b) === 'two'), 60_000);
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    stuck = false;

    workers.push(startWorkerProcess(env));
    const run = await finished(env, org, chain.chainId, runId, 120_000);
    expect(run.status, run.statusMessage ?? '').to.equal('success');
    expect(run.generation).to.equal(1);
    expect(run.state).to.deep.equal({ input: {}, a: 'one', b: 'two', c: 'three' });
    const asked = (text: string) => chain.calls().filter((b) => stepText(b) === text).length;
    expect([asked('one'), asked('two'), asked('three')]).to.deep.equal([1, 2, 1]);
    const handle = env.deps.temporal.client.workflow.getHandle(
      workflowIds.chainRun(org.organizationId, runId, 1),
    );
    expect(await handle.result()).to.deep.equal({ status: 'success', statusMessage: null });
  });
});
