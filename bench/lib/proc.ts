/**
 * CPU time and memory of other processes on this machine, from /proc (Linux): what a bench reports per process
 * (the API, the database, Temporal, Redis), so a figure can be split by who spent it.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Linux reports CPU time in /proc in clock ticks of 1/100 s (USER_HZ). */
const TICK_MS = 10;

/** A process's CPU time so far (user + system, all threads) and its RSS now and at its peak (VmHWM). */
export function procStats(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: state is the first, utime the 12th, stime the 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? NaN);
  return {
    cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
    rssMb: kb('VmRSS') / 1024,
    peakRssMb: kb('VmHWM') / 1024,
  };
}

/** The pid of the process listening on TCP `port` (IPv4 or IPv6), or undefined. */
export function pidListeningOn(port: number): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (addr:PORT), st is f[3] (0A = LISTEN), inode is f[9]
      if (f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A' && f[9]) inodes.add(`socket:[${f[9]}]`);
    }
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) return Number(entry);
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}

/** The pids of the stack's servers a config points at: the database, Temporal and Redis. */
export function stackPids(config: { mongodbUri: string; temporal: { address: string }; redisUrl: string }) {
  const portOf = (url: string) => Number(new URL(url).port);
  return {
    database: pidListeningOn(portOf(config.mongodbUri)),
    Temporal: pidListeningOn(portOf(`grpc://${config.temporal.address}`)),
    Redis: pidListeningOn(portOf(config.redisUrl)),
  };
}

/** CPU ms spent by each named process between `start()` and each `stop()`, accumulated over several spans. */
export function cpuAccount(pids: Record<string, number | undefined>) {
  const total: Record<string, number> = {};
  let from: Record<string, number> = {};
  const now = () =>
    Object.fromEntries(
      Object.entries(pids).flatMap(([name, pid]) =>
        pid === undefined ? [] : [[name, procStats(pid).cpuMs]],
      ),
    );
  return {
    start() {
      from = now();
    },
    stop() {
      for (const [name, ms] of Object.entries(now()))
        total[name] = (total[name] ?? 0) + ms - (from[name] ?? ms);
    },
    total,
  };
}
