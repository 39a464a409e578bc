/** Embeddings are stored with their chunk as float32 (little-endian), so copies reuse them. */
export function embeddingToBuffer(values: number[]): Buffer {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf;
}

/** Reads a stored embedding: a Buffer, or the BSON Binary a lean read returns. */
export function embeddingFromBuffer(stored: Uint8Array | { buffer: Uint8Array }): number[] {
  const bytes = stored instanceof Uint8Array ? stored : stored.buffer;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: b.length / 4 }, (_, i) => b.readFloatLE(i * 4));
}
