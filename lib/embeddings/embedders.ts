import type { Embedder } from './embedder';

/** The embedders this process can use, by model id: a knowledge base is always embedded with the model it
 * recorded, so a process configured with another default still serves older knowledge bases it has. */
export class Embedders {
  private readonly byId: Map<string, Embedder>;

  constructor(
    readonly defaultEmbedder: Embedder,
    others: Embedder[] = [],
  ) {
    this.byId = new Map([defaultEmbedder, ...others].map((e) => [e.model.id, e]));
  }

  get(modelId: string): Embedder | undefined {
    return this.byId.get(modelId);
  }
}
