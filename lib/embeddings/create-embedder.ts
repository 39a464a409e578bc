import type OpenAI from 'openai';
import type { Embedder } from '@lib/embeddings/embedder';
import { LOCAL_MODEL, LocalEmbedder } from '@lib/embeddings/local';
import { OpenAiEmbedder } from '@lib/embeddings/openai';

export interface EmbedderSettings {
  provider: 'local' | 'openai';
  /** the OpenAI model (default text-embedding-3-small); the local provider has one model */
  model?: string;
  /** the folder of the local model (LOCAL_EMBEDDING_MODEL_DIR) */
  localModelDir?: string;
}

/** One loaded local model per folder and process: it takes ~90 MB and a thread, whoever asks for it. */
const localModels = new Map<string, Promise<LocalEmbedder>>();

function sharedLocalModel(dir: string): Promise<LocalEmbedder> {
  let model = localModels.get(dir);
  if (!model) {
    model = LocalEmbedder.load(dir);
    // A failed load (missing folder) is retried on the next call rather than remembered forever.
    model.catch(() => localModels.delete(dir));
    localModels.set(dir, model);
  }
  return model;
}

export function createEmbedder(settings: EmbedderSettings, llm: OpenAI): Embedder {
  if (settings.provider === 'openai') {
    return new OpenAiEmbedder(llm, { model: settings.model ?? 'text-embedding-3-small' });
  }
  const dir = settings.localModelDir;
  if (!dir)
    throw new Error('the local embedder needs LOCAL_EMBEDDING_MODEL_DIR (npm start and npm test set it)');
  // Loaded on first use, so processes that never embed (the API, the CLI) never pay for the model.
  return {
    model: LOCAL_MODEL,
    embed: async (texts) => (await sharedLocalModel(dir)).embed(texts),
  };
}
