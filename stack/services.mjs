// Starts the local stack's servers as child processes and waits until each answers.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { log, ROOT } from './provision.mjs';

/** Keyword search attributes the service sets on its workflows (docs/operations.md "Search attributes"). */
export const SEARCH_ATTRIBUTES = [
  'OrganizationId',
  'AgentId',
  'ActionChainId',
  'KnowledgeBaseId',
  'TriggerId',
];

// Two port sets so `npm test` can run beside a running `npm start`.
const PORTS = {
  dev: {
    mongo: 27017,
    temporal: 7233,
    temporalUi: 8233,
    s3: 8333,
    weedMaster: 9333,
    weedVolume: 9340,
    weedFiler: 8888,
    weedAdmin: 23646,
    redis: 6379,
    smtp: 2525,
    inboundSmtp: 2526,
  },
  test: {
    mongo: 27117,
    temporal: 7333,
    temporalUi: 8433,
    s3: 8533,
    weedMaster: 9433,
    weedVolume: 9440,
    weedFiler: 8988,
    weedAdmin: 23746,
    redis: 6479,
    smtp: 2625,
    inboundSmtp: 2626,
  },
};

const BUCKET = 'agent-workspace';

function waitForPort(port, name, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`${name} did not open port ${port}`));
        else setTimeout(attempt, 200);
      });
    };
    attempt();
  });
}

function portIsFree(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** Secrets generated once per data folder, so sessions and stored objects survive restarts. */
function loadSecrets(dataDir) {
  const file = join(dataDir, 'secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  const secrets = {
    jwtSecret: randomBytes(32).toString('base64url'),
    s3AccessKeyId: `local${randomBytes(6).toString('hex')}`,
    s3SecretAccessKey: randomBytes(24).toString('base64url'),
  };
  writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  return secrets;
}

/**
 * Starts every part the environment does not point at and returns the environment the API, worker
 * and tests need, plus stop().
 */
export async function startStack({ profile, dataDir, bins, env = process.env, mailSink = false }) {
  // STACK_PORT_OFFSET shifts every port, so several test runs can share one machine.
  const offset = Number(env.STACK_PORT_OFFSET ?? 0);
  const ports = Object.fromEntries(Object.entries(PORTS[profile]).map(([k, v]) => [k, v + offset]));
  mkdirSync(join(dataDir, 'logs'), { recursive: true });
  const secrets = loadSecrets(dataDir);
  const children = [];
  // The embedded vector store lives beside the other data (the API and the worker share it).
  const out = { DATA_DIR: dataDir, VECTOR_DIR: env.VECTOR_DIR ?? join(dataDir, 'vectors') };

  // What each server was started with, so one can be killed and started again (the fault-injection test).
  const specs = new Map();
  const start = async (name, cmd, args, port, extraEnv = {}) => {
    if (!(await portIsFree(port))) {
      throw new Error(
        `port ${port} for ${name} is taken; stop whatever uses it or point the service elsewhere by env`,
      );
    }
    specs.set(name, { cmd, args, port, extraEnv });
    const logFile = createWriteStream(join(dataDir, 'logs', `${name}.log`), { flags: 'a' });
    const child = spawn(cmd, args, {
      env: { ...process.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(logFile);
    child.stderr.pipe(logFile);
    child.on('exit', (code, signal) => {
      if (!child.stopping)
        log(`${name} exited (${code ?? signal}); see ${join(dataDir, 'logs', `${name}.log`)}`);
    });
    const i = children.findIndex((c) => c.name === name);
    if (i >= 0) children.splice(i, 1);
    children.push({ name, child });
    const exited = new Promise((_, reject) =>
      child.once('exit', (code) =>
        reject(
          new Error(`${name} exited during start-up (${code}); see ${join(dataDir, 'logs', `${name}.log`)}`),
        ),
      ),
    );
    exited.catch(() => {});
    await Promise.race([waitForPort(port, name), exited]);
    log(`${name} ready on 127.0.0.1:${port}`);
  };

  /** Kills one server (SIGKILL unless told) and waits until it is gone. */
  const kill = (name, signal = 'SIGKILL') => {
    const entry = children.find((c) => c.name === name);
    if (!entry) throw new Error(`no server named ${name} in this stack`);
    const { child } = entry;
    if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    child.stopping = true;
    return new Promise((resolve) => {
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  };

  /** Sends one server a signal and returns at once: SIGSTOP freezes it (its sockets stay open, nothing answers),
   * SIGCONT thaws it. */
  const signal = (name, sig) => {
    const entry = children.find((c) => c.name === name);
    if (!entry) throw new Error(`no server named ${name} in this stack`);
    entry.child.kill(sig);
  };

  /** Starts a killed server again, with the same arguments and data, and waits until it answers. */
  const restart = async (name) => {
    const spec = specs.get(name);
    if (!spec) throw new Error(`no server named ${name} in this stack`);
    await start(name, spec.cmd, spec.args, spec.port, spec.extraEnv);
  };

  const stop = async () => {
    await Promise.all(
      children.reverse().map(
        ({ child }) =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.stopping = true;
            const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill('SIGTERM');
          }),
      ),
    );
  };

  // Never leave servers behind: stop them on Ctrl+C during start-up, and kill any left when this process exits.
  const onSignal = () => void stop().then(() => process.exit(130));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('exit', () =>
    children.forEach(({ child }) => child.exitCode === null && child.kill('SIGKILL')),
  );

  try {
    const tasks = [];
    if (env.MONGODB_URI) out.MONGODB_URI = env.MONGODB_URI;
    else {
      out.MONGODB_URI = `mongodb://127.0.0.1:${ports.mongo}/agent_workspace`;
      // Serial GC and a bounded heap: two cores, and a heap sized for collections of a few hundred thousand
      // documents (MONGO_H2_HEAP to change it).
      tasks.push(
        start(
          'mongo-h2',
          'java',
          [
            '-XX:+UseSerialGC',
            `-Xmx${env.MONGO_H2_HEAP ?? '1g'}`,
            '-jar',
            bins.mongoH2,
            '--listen',
            `127.0.0.1:${ports.mongo}`,
            '--file',
            join(dataDir, 'mongo-h2', 'data.mv'),
            // Every query but `_id`/unique equality scans its collection: keep the hot ones in H2's page cache.
            '--cache-mb',
            '256',
          ],
          ports.mongo,
        ),
      );
    }

    if (env.TEMPORAL_ADDRESS) out.TEMPORAL_ADDRESS = env.TEMPORAL_ADDRESS;
    else {
      out.TEMPORAL_ADDRESS = `127.0.0.1:${ports.temporal}`;
      out.TEMPORAL_UI_URL = `http://127.0.0.1:${ports.temporalUi}`;
      const args = [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(ports.temporal),
        '--db-filename',
        join(dataDir, 'temporal.db'),
        '--log-level',
        'warn',
        // Tuned for latency while staying on disk (issue 16: 16–19 → 34–37 turn-shaped workflows/s, p99 6–7 s →
        // under 2 s on a 2-core machine): SQLite in WAL mode without an fsync per commit, one task-queue
        // partition (a single dev server gains nothing from several; with one, a poll finds the task at once),
        // and no throttle on the transfer queue that hands out workflow and activity tasks.
        ...['journal_mode=wal', 'synchronous=normal'].flatMap((p) => ['--sqlite-pragma', p]),
        ...[
          'matching.numTaskqueueReadPartitions=1',
          'matching.numTaskqueueWritePartitions=1',
          'history.transferProcessorMaxPollRPS=1000',
          // Task-queue fairness keyed by organization (docs/admission.md): one organization's backlog does not
          // delay another's first execution. Priority is on by default since server 1.29.
          'matching.enableFairness=true',
        ].flatMap((v) => ['--dynamic-config-value', v]),
        // The service's search attributes (lib/temporal/contracts/search-attributes.ts): every workflow it starts
        // carries them, and a start naming an unregistered one is refused.
        ...SEARCH_ATTRIBUTES.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
      ];
      args.push(...(profile === 'test' ? ['--headless'] : ['--ui-port', String(ports.temporalUi)]));
      tasks.push(start('temporal', bins.temporal, args, ports.temporal));
    }

    if (env.S3_ENDPOINT) out.S3_ENDPOINT = env.S3_ENDPOINT;
    else {
      out.S3_ENDPOINT = `http://127.0.0.1:${ports.s3}`;
      out.S3_BUCKET = BUCKET;
      out.S3_ACCESS_KEY_ID = secrets.s3AccessKeyId;
      out.S3_SECRET_ACCESS_KEY = secrets.s3SecretAccessKey;
      out.S3_FORCE_PATH_STYLE = 'true';
      mkdirSync(join(dataDir, 'seaweedfs'), { recursive: true });
      const args = [
        'mini',
        `-dir=${join(dataDir, 'seaweedfs')}`,
        '-ip=127.0.0.1',
        '-ip.bind=127.0.0.1',
        `-s3.port=${ports.s3}`,
        `-master.port=${ports.weedMaster}`,
        `-volume.port=${ports.weedVolume}`,
        `-filer.port=${ports.weedFiler}`,
        `-admin.port=${ports.weedAdmin}`,
        '-admin.ui=false',
        '-webdav=false',
        '-s3.port.iceberg=0',
        '-s3.port.lance=0',
        '-master.telemetry=false',
        `-bucket=${BUCKET}`,
      ];
      // With these set, weed mini requires real SigV4 signatures for this key pair.
      tasks.push(
        start('seaweedfs', bins.weed, args, ports.s3, {
          AWS_ACCESS_KEY_ID: secrets.s3AccessKeyId,
          AWS_SECRET_ACCESS_KEY: secrets.s3SecretAccessKey,
        }),
      );
    }

    if (env.REDIS_URL) out.REDIS_URL = env.REDIS_URL;
    else {
      out.REDIS_URL = `redis://127.0.0.1:${ports.redis}`;
      mkdirSync(join(dataDir, 'redis'), { recursive: true });
      const args = [
        '--port',
        String(ports.redis),
        '--bind',
        '127.0.0.1',
        '--dir',
        join(dataDir, 'redis'),
        '--appendonly',
        'yes',
        '--save',
        '',
      ];
      tasks.push(start('redis', bins.redis, args, ports.redis));
    }

    if (env.SMTP_URL) out.SMTP_URL = env.SMTP_URL;
    else if (mailSink) {
      out.SMTP_URL = `smtp://127.0.0.1:${ports.smtp}`;
      const mailDir = join(dataDir, 'mail');
      tasks.push(
        start(
          'mail-sink',
          process.execPath,
          [join(ROOT, 'stack', 'mail-sink.mjs'), String(ports.smtp), mailDir],
          ports.smtp,
        ),
      );
    }

    // The API takes agents' inbound mail on loopback (its own listener, not a separate server); the sink above
    // receives their replies.
    if (mailSink) out.INBOUND_SMTP_PORT = env.INBOUND_SMTP_PORT ?? String(ports.inboundSmtp);
    // Agents' addresses may only use the operator's agent mail domains (AGENT_EMAIL_DOMAINS); locally one that
    // cannot be anyone's real address. The test stack sets its own (test-stack.mjs).
    if (mailSink) out.AGENT_EMAIL_DOMAINS = env.AGENT_EMAIL_DOMAINS ?? 'agents.localhost';

    out.JWT_SECRET = env.JWT_SECRET ?? secrets.jwtSecret;
    await Promise.all(tasks);
    await waitForS3Bucket(out);
  } catch (err) {
    await stop();
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  return { env: out, stop, kill, restart, signal };
}

// weed mini opens its S3 port before the bucket given by -bucket exists.
async function waitForS3Bucket(out) {
  if (!out.S3_BUCKET) return;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const res = await fetch(`${out.S3_ENDPOINT}/${out.S3_BUCKET}`, { method: 'HEAD' }).catch(() => null);
    // Unsigned: 403 means the bucket exists and auth is enforced; 404 means not created yet.
    if (res && res.status === 403) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('S3 bucket was not created in time');
}
