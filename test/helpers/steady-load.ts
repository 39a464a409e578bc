import type { FaultWorld } from './fault-world';

const KINDS = ['turn', 'chainRun', 'delivery', 'upload'] as const;

/**
 * A steady load on a fault world: every `everyMs` one more piece of work (a turn, a chain run, a webhook delivery,
 * an upload, in turn), each submitted without waiting for the ones before, so a request held by a frozen
 * dependency holds only itself. `phase` names what is submitted from now on (it prefixes every tag).
 */
export function steadyLoad(world: FaultWorld, everyMs = 1500) {
  const inFlight = new Set<Promise<void>>();
  const failures: unknown[] = [];
  let phase = 'warm-up';
  let n = 0;
  const timer = setInterval(() => {
    const kind = KINDS[n % KINDS.length]!;
    const job = world.submit[kind](`${phase}-${++n}`).catch((err: unknown) => void failures.push(err));
    inFlight.add(job);
    void job.finally(() => inFlight.delete(job));
  }, everyMs);
  return {
    set phase(name: string) {
      phase = name;
    },
    /** Stops submitting and waits until everything submitted was accepted (or refused, for chain runs). */
    async stop() {
      clearInterval(timer);
      while (inFlight.size) await Promise.all(inFlight);
      if (failures.length) throw failures[0];
    },
    /** Stops submitting, and what was submitted stops sending again (the test failed). */
    abandon() {
      clearInterval(timer);
      world.abandon();
    },
  };
}
