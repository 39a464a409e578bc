/** The soak's closing report: per kind, the invariants, the HTTP answers, and RSS after warm-up. */
import { table } from '../lib/load';
import type { Invariant } from './checks';
import { KINDS, percentile, type Ledger } from './ledger';
import { perMinute, type RssSample, type rssFigures } from './rss';

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} ms` : '—');

export function kindTable(ledger: Ledger): string {
  return table(
    ['kind', 'accepted', 'completed', 'failed', 'refused (429)', 'p50', 'p95'],
    KINDS.map((kind) => {
      const s = ledger.stats.get(kind)!;
      return [
        kind,
        String(s.accepted),
        String(s.completed),
        String(s.failed),
        String(s.refused),
        ms(percentile(s.latenciesMs, 0.5)),
        ms(percentile(s.latenciesMs, 0.95)),
      ];
    }),
  );
}

export function failureLines(ledger: Ledger): string[] {
  return KINDS.flatMap((kind) => ledger.stats.get(kind)!.failures.map((f) => `  ${kind}: ${f}`));
}

export function invariantLines(invariants: Invariant[]): string[] {
  return invariants.map((i) => `  ${i.ok ? 'ok  ' : 'FAIL'} ${i.name} (${i.detail})`);
}

export function rssTable(
  figures: Record<string, ReturnType<typeof rssFigures>>,
  limitMbPer10Min: Record<string, number>,
): string {
  return table(
    [
      'process',
      'samples',
      'RSS after warm-up',
      'last',
      'max',
      'RSS slope (MB / 10 min)',
      'limit',
      'used heap slope',
    ],
    Object.entries(figures).map(([name, f]) => [
      name,
      String(f.samples),
      `${f.firstMb.toFixed(0)} MB`,
      `${f.lastMb.toFixed(0)} MB`,
      `${f.maxMb.toFixed(0)} MB`,
      f.slopeMbPer10Min.toFixed(1),
      `${limitMbPer10Min[name]} ${f.slopeMbPer10Min <= limitMbPer10Min[name]! ? 'ok' : 'FAIL'}`,
      Number.isFinite(f.heapSlopeMbPer10Min) ? f.heapSlopeMbPer10Min.toFixed(1) : '—',
    ]),
  );
}

export function perMinuteLines(series: Record<string, RssSample[]>): string[] {
  return Object.entries(series).map(([name, s]) => `  ${name}: ${perMinute(s).join(' ')} MB`);
}
