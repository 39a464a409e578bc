import { cpus } from 'node:os';
import { table } from '../lib/load';
import { pct, PHASES, type Sample } from './measure';

export const ms = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

export function stat(s: Sample[]) {
  const firsts = s.map((x) => x.first);
  const ends = s.map((x) => x.end);
  return {
    n: s.length,
    first50: pct(firsts, 0.5),
    first99: pct(firsts, 0.99),
    end50: pct(ends, 0.5),
    end99: pct(ends, 0.99),
  };
}

const row = (label: string, st: ReturnType<typeof stat>, errs: number | string) => [
  label,
  String(st.n),
  String(errs),
  ms(st.first50),
  ms(st.first99),
  ms(st.end50),
  ms(st.end99),
];

export interface TurnsReport {
  turns: number;
  targets: { p50: number; p99: number };
  roundRows: string[][];
  samples: Record<'direct' | 'service', Sample[]>;
  sequential: Record<'direct' | 'service', Sample[]>;
  errors: Record<'direct' | 'service', number>;
  lag: Record<'direct' | 'service', number[]>;
  phases: { sequential: Map<string, number[]>; concurrent: Map<string, number[]> };
}

export function printTurns(r: TurnsReport) {
  console.log(
    table(
      ['round', 'arm', 'ok', 'errors', 'first p50', 'first p99', 'end p50', 'end p99', 'loop lag p99'],
      r.roundRows,
    ),
  );
  console.log('');
  const d = stat(r.samples.direct);
  const s = stat(r.samples.service);
  const posted = r.samples.service.map((x) => x.posted ?? NaN);
  console.log(
    table(
      ['ms', 'samples', 'errors', 'first p50', 'first p99', 'end p50', 'end p99'],
      [
        row(`direct, ${r.turns} concurrent: SDK first token / end of stream`, d, r.errors.direct),
        row(`service, ${r.turns} concurrent: POST → first delta / message`, s, r.errors.service),
        [
          `service, ${r.turns} concurrent: POST → 201`,
          String(posted.length),
          '',
          ms(pct(posted, 0.5)),
          ms(pct(posted, 0.99)),
          '',
          '',
        ],
        row('direct, one at a time', stat(r.sequential.direct), 0),
        row('service, one at a time', stat(r.sequential.service), 0),
      ],
    ),
  );
  const over50 = s.first50 - d.first50;
  const over99 = s.first99 - d.first99;
  const verdict = (v: number, target: number) => (v <= target ? 'met' : 'NOT met');
  console.log(
    `\nfirst-delta overhead p50: ${over50.toFixed(1)} ms (target ≤ ${r.targets.p50} ms): ${verdict(over50, r.targets.p50)}`,
  );
  console.log(
    `first-delta overhead p99: ${over99.toFixed(1)} ms (target ≤ ${r.targets.p99} ms): ${verdict(over99, r.targets.p99)}`,
  );
  const single = { service: stat(r.sequential.service), direct: stat(r.sequential.direct) };
  const alone = single.service.first50 - single.direct.first50;
  console.log(
    `one at a time, first delta p50 ${ms(single.service.first50)} ms against the direct first token ` +
      `${ms(single.direct.first50)} ms: +${ms(alone)} ms (target ≤ +50 ms): ${verdict(alone, 50)}`,
  );
  const ratio = s.first50 / single.service.first50;
  console.log(
    `${r.turns} concurrent, first delta p50 ${ms(s.first50)} ms: ${ratio.toFixed(1)}× one at a time ` +
      `(target ≤ 4×): ${verdict(ratio, 4)}`,
  );
  console.log(
    `final message / end of stream: p50 ${(s.end50 / d.end50).toFixed(2)}× ` +
      `(+${(s.end50 - d.end50).toFixed(1)} ms), p99 ${(s.end99 / d.end99).toFixed(2)}× ` +
      `(+${(s.end99 - d.end99).toFixed(1)} ms)`,
  );
  console.log(
    `event-loop delay p99 (worst round): service ${ms(Math.max(...r.lag.service))} ms, ` +
      `direct ${ms(Math.max(...r.lag.direct))} ms`,
  );
  console.log(
    `\nwhere a turn's time goes (Temporal event times, ms resolution): ${r.sequential.service.length} turns ` +
      `one at a time, ${r.samples.service.length} in rounds of ${r.turns} concurrent\n`,
  );
  const p = (phase: Map<string, number[]>, n: string, q: number) => ms(pct(phase.get(n)!, q));
  console.log(
    table(
      ['phase', '1 at a time p50', `${r.turns} concurrent p50`, `${r.turns} concurrent p99`],
      PHASES.map((n) => [
        n,
        p(r.phases.sequential, n, 0.5),
        p(r.phases.concurrent, n, 0.5),
        p(r.phases.concurrent, n, 0.99),
      ]),
    ),
  );
}

export interface CreateStats {
  latencies: number[];
  errors: number;
  seconds: number;
  lag: number[];
}

export function printCreates(
  settings: { creates: number; concurrency: number; sequential: number },
  concurrent: Record<'api' | 'driver', CreateStats>,
  single: Record<'api' | 'driver', CreateStats>,
) {
  const createRow = (label: string, c: CreateStats) => [
    label,
    String(c.latencies.length),
    String(c.errors),
    (c.latencies.length / c.seconds).toFixed(0),
    ms(pct(c.latencies, 0.5)),
    ms(pct(c.latencies, 0.99)),
    ms(Math.max(...c.lag)),
  ];
  console.log(
    `\nconversation creation: ${settings.creates} per side with ${settings.concurrency} concurrent clients, ` +
      `${settings.sequential} per side one at a time\n`,
  );
  console.log(
    table(
      ['create', 'n', 'errors', 'per s', 'p50 ms', 'p99 ms', 'loop lag p99'],
      [
        createRow(`POST /orgs/{org}/conversations, ${settings.concurrency} clients`, concurrent.api),
        createRow(`driver insertOne, ${settings.concurrency} clients`, concurrent.driver),
        createRow('POST /orgs/{org}/conversations, 1 client', single.api),
        createRow('driver insertOne, 1 client', single.driver),
      ],
    ),
  );
  const rate = (c: CreateStats) => c.latencies.length / c.seconds;
  console.log(
    `\napi/driver conversations per second: ${(rate(concurrent.api) / rate(concurrent.driver)).toFixed(3)} at ` +
      `${settings.concurrency} clients, ${(rate(single.api) / rate(single.driver)).toFixed(3)} at 1 client`,
  );
}

/**
 * The bare workflow's latency alone and under the same concurrency as the turns, and its ratio beside the
 * service's: what this stack's Temporal allows any workflow under that load on this machine.
 */
export function printBare(
  bare: { sequential: number[]; concurrent: number[] },
  service: { sequential: Sample[]; concurrent: Sample[] },
  concurrent: number,
) {
  const b = { one: pct(bare.sequential, 0.5), many: pct(bare.concurrent, 0.5) };
  const firstP50 = (x: Sample[]) =>
    pct(
      x.map((y) => y.first),
      0.5,
    );
  const sv = { one: firstP50(service.sequential), many: firstP50(service.concurrent) };
  console.log(
    `
bare workflow (starts and completes, own worker in the bench process), start → result: one at a time ` +
      `p50 ${ms(b.one)} ms (n ${bare.sequential.length}); ${concurrent} at once p50 ${ms(b.many)} ms, p99 ` +
      `${ms(pct(bare.concurrent, 0.99))} ms (n ${bare.concurrent.length}). ${concurrent} at once / one at a ` +
      `time, p50: bare workflow ${(b.many / b.one).toFixed(1)}×, service first delta ` +
      `${(sv.many / sv.one).toFixed(1)}× (target ≤ 4×).`,
  );
}

/** Issue 35's target: first delta p50 ≤ 1.3× the floor's p50 (start → first activity), per round and overall. */
export function printFloor(rounds: Array<{ floor: number[]; service: number[] }>, concurrent: number) {
  const ratios = rounds.map((r) => pct(r.service, 0.5) / pct(r.floor, 0.5));
  const all = { floor: rounds.flatMap((r) => r.floor), service: rounds.flatMap((r) => r.service) };
  const ratio = pct(all.service, 0.5) / pct(all.floor, 0.5);
  console.log(
    `\nfloor: a bare workflow running one activity (own worker in the bench process), ${concurrent} at once, ` +
      `start → its activity starting: p50 ${ms(pct(all.floor, 0.5))} ms, p99 ${ms(pct(all.floor, 0.99))} ms ` +
      `(n ${all.floor.length}). First delta p50 / floor p50: ${ratio.toFixed(2)}× (per round ` +
      `${ratios.map((x) => x.toFixed(2)).join(', ')}; target ≤ 1.3×: ${ratio <= 1.3 ? 'met' : 'not met'}).`,
  );
}

/**
 * CPU per unit (a turn, or a floor workflow) by process over the concurrent rounds of its arm, and what it implies
 * on this machine's cores: a round of `concurrent` units cannot end sooner than their CPU divided by the cores,
 * however it is scheduled.
 */
export function printCpu(cpuMs: Record<string, number>, count: number, concurrent: number, unit = 'turn') {
  const cores = cpus().length;
  const perUnit = Object.entries(cpuMs).map(([name, total]) => [name, total / count] as const);
  const sum = perUnit.reduce((n, [, ms]) => n + ms, 0);
  console.log(
    `\nCPU per ${unit} over the concurrent ${unit === 'turn' ? 'service' : 'floor'} rounds (/proc; ${count}): ` +
      `${perUnit.map(([name, v]) => `${name} ${ms(v)}`).join(', ')}; total ${ms(sum)} ms. ` +
      `On ${cores} cores a round of ${concurrent} needs at least ${ms((sum * concurrent) / cores)} ms, and the first ` +
      `half of it at least ${ms((sum * concurrent) / 2 / cores)} ms.`,
  );
}
