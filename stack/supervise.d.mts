import type { ChildProcess } from 'node:child_process';

export interface Supervised {
  readonly child: ChildProcess;
  readonly restarts: number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export declare function supervise(opts: {
  name: string;
  start: () => ChildProcess;
  log: (message: string) => void;
  initialDelayMs?: number;
  maxDelayMs?: number;
  healthyAfterMs?: number;
}): Supervised;
