import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { supervise, type Supervised } from '@stack/supervise.mjs';
import { eventually } from '@test/helpers/wait';

// `npm start` (stack/start.mjs) runs the API and the worker under this supervisor: a crash restarts that one
// process after a backoff, and says so; it never takes the stack down (issue 32). Tiny stand-in processes here.
describe('npm start supervision: a crashed API or worker is restarted with backoff', function () {
  this.timeout(30_000);
  let supervised: Supervised | undefined;
  afterEach(async () => {
    await supervised?.stop();
    supervised = undefined;
  });

  /** A stand-in service: stays up `upMs`, then exits with code 3 (or stays up when upMs is null). */
  const fakeService = (upMs: number | null) => () =>
    spawn(
      process.execPath,
      ['-e', upMs === null ? 'setInterval(() => {}, 1000)' : `setTimeout(() => process.exit(3), ${upMs})`],
      { stdio: 'ignore' },
    );

  it('restarts a process that keeps crashing, doubling the pause up to the ceiling, and logs each restart', async () => {
    const lines: string[] = [];
    const pids = new Set<number>();
    const start = fakeService(0);
    supervised = supervise({
      name: 'worker',
      log: (line) => lines.push(line),
      start: () => {
        const child = start();
        if (child.pid) pids.add(child.pid);
        return child;
      },
      initialDelayMs: 10,
      maxDelayMs: 40,
      healthyAfterMs: 60_000,
    });
    await eventually(() => supervised!.restarts >= 4, 20_000);
    const crashes = lines.filter((l) => l.includes('exited'));
    expect(crashes[0]).to.match(
      /^worker exited \(code 3\) after \d+ ms; restarting it in 10 ms \(restart 1;/,
    );
    expect(crashes.slice(0, 4).map((l) => /restarting it in (\d+) ms/.exec(l)?.[1])).to.deep.equal([
      '10',
      '20',
      '40',
      '40',
    ]);
    expect(lines.some((l) => /^worker restarted \(pid \d+\)$/.test(l))).to.equal(true);
    expect(pids.size).to.be.at.least(4);
  });

  it('goes back to the first pause after the process stayed up long enough', async () => {
    const lines: string[] = [];
    supervised = supervise({
      name: 'api',
      log: (line) => lines.push(line),
      start: fakeService(300),
      initialDelayMs: 10,
      maxDelayMs: 1_000,
      healthyAfterMs: 200,
    });
    await eventually(() => supervised!.restarts >= 3, 20_000);
    const pauses = lines
      .filter((l) => l.includes('exited'))
      .map((l) => /restarting it in (\d+) ms/.exec(l)?.[1]);
    expect(pauses.slice(0, 3)).to.deep.equal(['10', '10', '10']);
  });

  it('stops the process on stop() and restarts nothing after', async () => {
    const lines: string[] = [];
    supervised = supervise({ name: 'api', log: (line) => lines.push(line), start: fakeService(null) });
    const child = supervised.child;
    await eventually(() => child.pid !== undefined);
    await supervised.stop();
    expect(child.signalCode).to.equal('SIGTERM');
    expect(supervised.restarts).to.equal(0);
    expect(lines).to.deep.equal([]);
  });
});
