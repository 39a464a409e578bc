// The soak (bench/soak.ts) on the test stack: in CI, `npm test` runs it for SOAK_MINUTES (3) beside Schemathesis
// (one process, bounded to 300 s), after mocha. It builds dist/ and runs the API and the worker
// from there on a task queue and ports of their own; its output is held back and printed in one piece when it ends,
// so it does not interleave with Schemathesis's.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, ROOT } from './provision.mjs';

function run(command, args, env, out) {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  return new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

/** Builds, then soaks for `minutes` against the stack `env`; resolves with its exit code once its output is printed. */
export async function runSoak(env, dataDir, minutes) {
  const file = join(dataDir, 'soak.log');
  const out = createWriteStream(file);
  const started = Date.now();
  log(`soak: ${minutes} min beside Schemathesis (output when it ends)`);
  const soakEnv = {
    ...env,
    NODE_ENV: 'production',
    VALIDATE_RESPONSES: 'false',
    LOG_LEVEL: 'silent',
  };
  let code = await run('npm', ['run', '--silent', 'build'], soakEnv, out);
  if (code === 0)
    code = await run(
      process.execPath,
      [
        join(ROOT, 'node_modules/tsx/dist/cli.mjs'),
        join(ROOT, 'bench/soak.ts'),
        '--minutes',
        String(minutes),
      ],
      soakEnv,
      out,
    );
  await new Promise((resolve) => out.end(resolve));
  process.stdout.write(`\n----- soak (${Math.round((Date.now() - started) / 1000)} s) -----\n`);
  process.stdout.write(readFileSync(file, 'utf8'));
  process.stdout.write('----- end of soak -----\n');
  return code;
}
