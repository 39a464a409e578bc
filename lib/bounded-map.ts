/**
 * A Map of at most `capacity` entries: setting a key makes it the newest, and past the capacity the oldest is
 * dropped. Setting a key again on a read (`get` then `set`) keeps the most recently used.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key);
    if (this.size >= this.capacity) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}
