/**
 * The scripted model's part (test/helpers/llm.ts, real HTTP and SSE): a turn's reply is derived from its message
 * and streamed in pieces, so the soak can compare what streamed with what was stored; chain steps answer their
 * output schemas.
 */
import { lastUserText, type ChatRequest, type ScriptedLlm } from '@test/helpers/llm';
import { AGENT_MARK, CHAIN_MARK } from './setup';

const systemText = (body: ChatRequest) =>
  body.messages
    .filter((m) => m.role === 'system')
    .map((m) => (typeof m.content === 'string' ? m.content : ''))
    .join('\n');

/** The reply a turn whose message is `message` must stream and store. */
export function turnReply(message: string): string {
  return `Noted: ${message}. Nothing else to add.`;
}

/** Three pieces that concatenate to `text`. */
function pieces(text: string): string[] {
  const a = Math.floor(text.length / 3);
  return [text.slice(0, a), text.slice(a, 2 * a), text.slice(2 * a)];
}

export function scriptModel(llm: ScriptedLlm) {
  llm.on(
    (body) => systemText(body).includes(AGENT_MARK),
    (body) => {
      const content = turnReply(lastUserText(body));
      return { content, chunks: pieces(content) };
    },
  );
  llm.on(
    (body) => systemText(body).includes(CHAIN_MARK),
    (body) => {
      const text = lastUserText(body).trim();
      const item = /^Item (\S+)/.exec(text);
      if (item) return { content: JSON.stringify({ x: item[1]!.toUpperCase() }) };
      if (text.startsWith('Handle')) return { content: '{"ok": true}' };
      return { content: text };
    },
  );
  // The scripted server records every request; the soak never reads them, so it keeps none (an hour's run).
  const timer = setInterval(() => {
    llm.requests.length = 0;
  }, 10_000);
  timer.unref();
}
