import OpenAI from 'openai';

/** The OpenAI-compatible client. Retries are Temporal's job (visible in history), so the SDK never retries. */
export function createLlmClient(settings: { baseUrl: string; apiKey: string }): OpenAI {
  return new OpenAI({
    baseURL: settings.baseUrl,
    apiKey: settings.apiKey || 'not-set',
    maxRetries: 0,
    timeout: 120_000,
  });
}

/** Reasoning models take `reasoning_effort` and refuse `temperature`. */
export function isReasoningModel(model: string): boolean {
  return /^(o\d|gpt-5)/.test(model);
}
