// `npm start` keeps the API and the worker running: a process that exits on its own (a crash, an out-of-memory
// abort) is started again after a pause that doubles with each quick exit (1 s, 2 s, … 30 s at most) and goes back
// to the first pause once the process has stayed up for a minute. A crash never stops the rest of the stack; only
// stop() (Ctrl+C) does. docker-compose.yml and Kubernetes do the same with their restart policies.

/**
 * Starts `start()` now and again whenever the process it returns exits, until stop().
 * @param {object} opts
 * @param {string} opts.name how the log names the process
 * @param {() => import('node:child_process').ChildProcess} opts.start spawns the process
 * @param {(message: string) => void} opts.log
 * @param {number} [opts.initialDelayMs] the first pause before a restart
 * @param {number} [opts.maxDelayMs] the longest pause
 * @param {number} [opts.healthyAfterMs] up this long, the next crash pauses initialDelayMs again
 */
export function supervise({
  name,
  start,
  log,
  initialDelayMs = 1_000,
  maxDelayMs = 30_000,
  healthyAfterMs = 60_000,
}) {
  let child;
  let stopping = false;
  let timer = null;
  let delay = initialDelayMs;
  let restarts = 0;

  const launch = () => {
    const startedAt = Date.now();
    const current = start();
    child = current;
    let ended = false;
    const onEnd = (how) => {
      if (ended) return;
      ended = true;
      if (stopping) return;
      const upMs = Date.now() - startedAt;
      if (upMs >= healthyAfterMs) delay = initialDelayMs;
      restarts += 1;
      log(
        `${name} ${how} after ${formatMs(upMs)}; restarting it in ${formatMs(delay)} ` +
          `(restart ${restarts}; the rest of the stack keeps running)`,
      );
      timer = setTimeout(() => {
        timer = null;
        if (stopping) return;
        launch();
        log(`${name} restarted (pid ${child.pid ?? 'none'})`);
      }, delay);
      delay = Math.min(delay * 2, maxDelayMs);
    };
    current.once('exit', (code, signal) => onEnd(`exited (${signal ?? `code ${code}`})`));
    // a process that could not be spawned at all emits only 'error'
    current.once('error', (err) => onEnd(`could not run (${err.message})`));
  };
  launch();

  return {
    get child() {
      return child;
    },
    get restarts() {
      return restarts;
    },
    /** Stops restarting, then ends the process (SIGTERM) and waits for it to exit. */
    async stop(signal = 'SIGTERM') {
      stopping = true;
      if (timer) clearTimeout(timer);
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}

function formatMs(ms) {
  return ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
