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

  /** Streams one call; the text deltas and the number of heartbeats it recorded. */
  async function stream() {
    const env = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
    let heartbeats = 0;
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
      (text: string) => deltas.push(text),
    );
    return { reply, deltas, heartbeats };
  }

  it('hands on every delta but heartbeats once for a burst of chunks', async () => {
    const chunks = Array.from({ length: 30 }, (_, i) => `w${i} `);
    llm.enqueue({ content: chunks.join(''), chunks });
    const { reply, deltas, heartbeats } = await stream();
    expect(deltas).to.deep.equal(chunks);
    expect(reply.content).to.equal(chunks.join(''));
    expect(heartbeats).to.equal(1);
  });

  it('heartbeats again on a chunk that comes after the heartbeat period', async () => {
    const chunks = ['one ', 'two'];
    llm.enqueue({ content: chunks.join(''), chunks, chunkDelayMs: HEARTBEAT_EVERY_MS + 100 });
    const { deltas, heartbeats } = await stream();
    expect(deltas).to.deep.equal(chunks);
    expect(heartbeats).to.be.at.least(2);
  });
});
