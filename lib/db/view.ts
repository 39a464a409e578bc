/** How a stored value looks on the wire: dates as ISO 8601 strings, absent values as null. */
export type WireValue<V> = [V] extends [Date]
  ? string
  : [Exclude<V, undefined>] extends [Date | null]
    ? string | null
    : undefined extends V
      ? Exclude<V, undefined> | null
      : V;

export type WireView<D, K extends keyof D> = { [P in K]: WireValue<D[P]> };

function wireValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  return value === undefined ? null : value;
}

/** The wire view of a stored document: the listed fields, dates as ISO strings, absent values as null. */
export function pickView<D extends object, K extends keyof D>(doc: D, keys: readonly K[]): WireView<D, K> {
  return Object.fromEntries(keys.map((k) => [k, wireValue(doc[k])])) as WireView<D, K>;
}

/** Dates as ISO strings (or null). */
export function iso(date: Date): string;
export function iso(date: Date | null | undefined): string | null;
export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}
