import { expect } from 'chai';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { ModelReply } from '@contracts';
import { HEARTBEAT_EVERY_MS, streamModel } from '@activities/llm-stream';
import { createLlmClient } from '@lib/llm';
import { startScriptedLlm, type ScriptedLlm } from '@test/helpers/llm';

describe('a streaming model call', () => {
  let llm: ScriptedLlm;
  before(async () => {
    llm = await startScriptedLlm();
  });
  after(() => llm.close());
  beforeEach(() => llm.reset());

  /** Streams one call; the text deltas, the number of heartbeats it recorded, and how many came before the first delta. */
  async function stream() {
    const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    let heartbeats = 0;
    let beforeFirstDelta: number | undefined;
    env.on('heartbeat', () => heartbeats++);
    const deltas: string[] = [];
    const reply = await env.run<Parameters<typeof streamModel>, ModelReply, typeof streamModel>(
      streamModel,
      createLlmClient({ baseUrl: llm.baseURL, apiKey: llm.apiKey }),
      {
        model: 'gpt-4o-mini',
        temperature: 0.4,
        reasoning: 'none',
        messages: [{ role: 'user' as const, content: 'hi' }],
        tools: [],
      },
      (text: string) => {
        beforeFirstDelta ??= heartbeats;
        deltas.push(text);
      },
    );
    return { reply, deltas, heartbeats, beforeFirstDelta };
  }

  it('hands on every delta, and a call done within the heartbeat period sends no heartbeat', async () => {
    const chunks = Array.from({ length: 30 }, (_, i) => `w${i} `);
    llm.enqueue({ content: chunks.join(''), chunks });
    const { reply, deltas, heartbeats } = await stream();
    expect(deltas).to.deep.equal(chunks);
    expect(reply.content).to.equal(chunks.join(''));
    expect(heartbeats).to.equal(0);
  });

  it('heartbeats while chunks come slower than the heartbeat period', async () => {
    const chunks = ['one ', 'two'];
    llm.enqueue({ content: chunks.join(''), chunks, chunkDelayMs: HEARTBEAT_EVERY_MS + 100 });
    const { deltas, heartbeats } = await stream();
    expect(deltas).to.deep.equal(chunks);
    expect(heartbeats).to.be.at.least(3); // about one a second over the 4.4 s its four chunks take
  });

  it('heartbeats while the model thinks before its first token (longer than the heartbeat timeout, say)', async () => {
    llm.enqueue({ content: 'Done.', delayMs: 2 * HEARTBEAT_EVERY_MS + 300 });
    const { deltas, heartbeats, beforeFirstDelta } = await stream();
    expect(deltas.join('')).to.equal('Done.');
    expect(beforeFirstDelta).to.be.at.least(2);
    // and none once the call is over
    await new Promise((resolve) => setTimeout(resolve, HEARTBEAT_EVERY_MS + 200));
    expect(heartbeats).to.equal(beforeFirstDelta);
  });
});
