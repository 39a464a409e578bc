/**
 * The RSS of the API and the worker, sampled from /proc every few seconds, and the least-squares slope of each
 * after the warm-up: what "nothing grows" is judged on.
 */
import { procStats } from '../lib/proc';

export interface RssSample {
  /** seconds since the mix started */
  t: number;
  mb: number;
  /** V8's used heap then (MB), from the process's /metrics: tells a leak in JS from one outside the heap */
  heapMb?: number;
}

/** A process to sample: its pid and, to read its used heap, its /metrics URL and the token. */
export interface Sampled {
  pid: number;
  metrics?: { url: string; token: string };
}

async function usedHeapMb(metrics: Sampled['metrics']): Promise<number | undefined> {
  if (!metrics) return undefined;
  try {
    const res = await fetch(metrics.url, {
      headers: { Authorization: `Bearer ${metrics.token}` },
      signal: AbortSignal.timeout(2000),
    });
    const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})? ([\d.e+]+)/m.exec(await res.text());
    return m ? Number(m[1]) / 2 ** 20 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples each process's RSS every `everyMs` until stop(); a process that has gone is left out from then on. */
export function sampleRss(processes: Record<string, Sampled>, everyMs: number) {
  const series: Record<string, RssSample[]> = Object.fromEntries(Object.keys(processes).map((n) => [n, []]));
  const started = Date.now();
  const take = () => {
    const t = (Date.now() - started) / 1000;
    for (const [name, p] of Object.entries(processes)) {
      let mb: number;
      try {
        mb = procStats(p.pid).rssMb;
      } catch {
        continue; // exited: the invariants report it (its requests fail)
      }
      const sample: RssSample = { t, mb };
      series[name]!.push(sample);
      void usedHeapMb(p.metrics).then((heapMb) => (sample.heapMb = heapMb));
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    series,
    stop() {
      clearInterval(timer);
      take();
    },
  };
}

/** Least-squares slope of mb over t (MB per second); NaN with fewer than two samples. */
export function slope(samples: RssSample[]): number {
  const n = samples.length;
  if (n < 2) return NaN;
  const mt = samples.reduce((s, x) => s + x.t, 0) / n;
  const mm = samples.reduce((s, x) => s + x.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x.mb - mm);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

/** What the report prints of one process: RSS after the warm-up (first, last, max) and the slope per 10 minutes. */
export function rssFigures(samples: RssSample[], warmUpSeconds: number) {
  const steady = samples.filter((s) => s.t >= warmUpSeconds);
  const mbs = steady.map((s) => s.mb);
  const heap = steady.flatMap((s) => (s.heapMb === undefined ? [] : [{ t: s.t, mb: s.heapMb }]));
  return {
    samples: steady.length,
    heapSlopeMbPer10Min: slope(heap) * 600,
    firstMb: mbs[0] ?? NaN,
    lastMb: mbs[mbs.length - 1] ?? NaN,
    maxMb: Math.max(...mbs),
    slopeMbPer10Min: slope(steady) * 600,
  };
}

/** The median RSS of each minute of the run (MB), for the eye: warm-up, plateau or climb. */
export function perMinute(samples: RssSample[]): number[] {
  const minutes: number[][] = [];
  for (const s of samples) (minutes[Math.floor(s.t / 60)] ??= []).push(s.mb);
  return minutes.map((mbs) => {
    const sorted = [...mbs].sort((a, b) => a - b);
    return Math.round(sorted[Math.floor(sorted.length / 2)] ?? NaN);
  });
}
