/**
 * docs/agents.md, "Assembling the reply from deltas": the reply is the latest round's text from its latest
 * attempt. Where a delta stands against the deltas kept so far (`latest` is their [round, attempt]): `stale`
 * (drop it), `newer` (drop what was kept and start from it) or `current` (add it).
 */
export function deltaPlace(
  latest: [number, number],
  p: Record<string, unknown>,
): 'stale' | 'newer' | 'current' {
  const at: [number, number] = [Number(p.round ?? 0), Number(p.attempt ?? 1)];
  const [round, attempt] = latest;
  if (at[0] < round || (at[0] === round && at[1] < attempt)) return 'stale';
  if (at[0] > round || at[1] > attempt) {
    latest[0] = at[0];
    latest[1] = at[1];
    return 'newer';
  }
  return 'current';
}
