import OpenAI from 'openai';
import { LocalModel, type LocalModelSettings } from './local-llm/local-model';
import { localModelFetch } from './local-llm/openai-fetch';
import type { Logger } from './logger';

/**
 * The chat provider every caller uses: an OpenAI SDK client, either for the OpenAI-compatible server at
 * OPENAI_BASE_URL or (provider `local`) for the in-process local model behind the same interface. Retries are
 * Temporal's job (visible in history), so the SDK never retries.
 */
export function createLlmClient(
  settings: { provider?: 'openai' | 'local'; baseUrl: string; apiKey: string; local?: LocalModelSettings },
  logger?: Logger,
): OpenAI {
  if (settings.provider === 'local') {
    if (!settings.local) throw new Error('the local provider needs its settings');
    const model = new LocalModel(settings.local, logger);
    const client = new OpenAI({
      // never reached over the network: `fetch` answers in-process
      baseURL: 'http://local-model.invalid/v1',
      apiKey: 'local',
      fetch: localModelFetch(model, logger),
      maxRetries: 0,
      // a call may wait in the model's queue behind others (chain steps allow 15 minutes)
      timeout: 600_000,
    });
    localModels.set(client, model);
    return client;
  }
  return new OpenAI({
    baseURL: settings.baseUrl,
    apiKey: settings.apiKey || 'not-set',
    maxRetries: 0,
    timeout: 120_000,
  });
}

const localModels = new WeakMap<OpenAI, LocalModel>();

/** The local model behind a client from createLlmClient, if it is one (benches and tests load it early). */
export function localModelOf(client: OpenAI): LocalModel | undefined {
  return localModels.get(client);
}

/** Frees the local model's memory and threads (nothing to do for a server's client). */
export async function closeLlmClient(client: OpenAI): Promise<void> {
  await localModels.get(client)?.close();
}

/** Reasoning models take `reasoning_effort` and refuse `temperature`. */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5)/.test(model);
}
