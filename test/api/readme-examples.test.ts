import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { answerSupportTriage } from '@test/helpers/chains';
import { useClientAndOrg } from '@test/helpers/client';
import { ROOT } from '@test/helpers/paths';

/** A fenced shell block of a document: where it starts, the words after its language, and its text. */
interface ShellBlock {
  line: number;
  language: string;
  mark: string;
  text: string;
}

/** Every fenced block of a shell language, in order (```sh, and the spellings the docs must not use). */
function shellBlocks(markdown: string): ShellBlock[] {
  return [...markdown.matchAll(/^```(sh|bash|shell|console|zsh)\b(.*)\n([\s\S]*?)^```$/gm)].map((m) => ({
    line: markdown.slice(0, m.index).split('\n').length,
    language: m[1]!,
    mark: m[2]!.trim(),
    text: m[3]!,
  }));
}

/** A block that is neither run nor says why not, in `file`; null when it is one or the other. */
function unmarked(file: string, block: ShellBlock): string | null {
  if (block.language === 'sh' && (block.mark === 'runnable' || /^not-runnable: \S/.test(block.mark)))
    return null;
  return `${file}:${block.line}: \`\`\`${block.language} ${block.mark}`;
}

// A document's blocks stop at the first command that fails; a hung one (a wait that never ends) at this bound.
const DOCUMENT_TIMEOUT_MS = 300_000;

/**
 * Runs `script` with bash as a newcomer's terminal would, stopping at the first failing command. `output` has
 * both streams with each command traced before it runs (what failed, and where); `stdout` what the commands
 * printed.
 */
function bash(script: string, env: NodeJS.ProcessEnv) {
  const child = spawn('bash', ['-euxo', 'pipefail', '-c', script], { cwd: ROOT, env, detached: true });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => {
    output += `\n(stopped after ${DOCUMENT_TIMEOUT_MS / 1000} s)`;
    process.kill(-child.pid!, 'SIGKILL');
  }, DOCUMENT_TIMEOUT_MS);
  return new Promise<{ code: number | null; output: string; stdout: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output, stdout });
    }),
  );
}

// What each document's examples show once they ran (beyond every command succeeding).
const SHOWN: Record<string, RegExp[]> = {
  // the chat's reply, the rows, the file found, the run, the delivery
  'README.md': [
    /"sessionToken"/,
    /\[message\] conversation/,
    /inserted 2, refused/,
    /handbook\.txt: /,
    /^success/m,
    /^whd_\S+ /m,
  ],
  'docs/artifacts-and-apps.md': [/3 new this week/, /"fileName": "Leads\.html"/],
  'docs/chains.md': [/"status": "success"/, /"reply": "We will correct the invoice\."/],
  'docs/identity.md': [/"sessionToken"/, /"name": "ACME Ltd"/, /"balance"/],
  'docs/knowledge-bases.md': [/"status": "READY"/, /25 days of paid leave/],
  'docs/schedules.md': [/"status": "success"/],
  'docs/webhooks.md': [/"status": "success"/, /"x-source": "crm"/],
};

// What a newcomer pastes from the README and docs/ works against the service as it is. The README's first
// runnable block (the quick start's variables: API, ORG, KEY, AGENT) comes first; then each document's runnable
// blocks run in order in one shell of its own (later blocks use the variables earlier ones set). Any command that
// fails fails the test, curl's answers included: every curl here runs with --fail-with-body (a .curlrc of the
// test's own), so a non-2xx is a failure unless a block says --no-fail-with-body. A shell block that is not
// ```sh runnable must say ```sh not-runnable: <why> (a real model key, Docker, an operator's production), so a new
// example cannot escape the test unnoticed.
describe('the runnable examples of README.md and docs/, as written', function () {
  this.timeout(1_200_000);
  const suite = useClientAndOrg('Readme Org');

  it('every shell block of README.md and docs/ is runnable or says why not', async () => {
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const unmarkedBlocks: string[] = [];
    const notRunnable: string[] = [];
    for (const file of ['README.md', ...docs]) {
      for (const block of shellBlocks(await readFile(join(ROOT, file), 'utf8'))) {
        const problem = unmarked(file, block);
        if (problem) unmarkedBlocks.push(problem);
        else if (block.mark !== 'runnable') notRunnable.push(`${file}:${block.line}: ${block.mark}`);
      }
    }
    expect(unmarkedBlocks, 'blocks to mark ```sh runnable or ```sh not-runnable: <why>').to.deep.equal([]);
    console.log(`      not run:\n${notRunnable.map((b) => `        ${b}`).join('\n')}`);
  });

  it('README.md has a quick start, and every runnable block there and in docs/ succeeds', async () => {
    const { env, baseUrl } = suite;
    // The model's part: the support chains ask for JSON of their steps' shapes (other calls get the echo).
    const forget = answerSupportTriage(env);
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const home = await mkdtemp(join(tmpdir(), 'readme-'));
    await writeFile(join(home, '.curlrc'), 'fail-with-body\n');
    const shellEnv = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      // The CLI reaches the test stack's database with its signing secret, and names this API in --export.
      JWT_SECRET: env.config.auth.jwtSecret,
      MONGODB_URI: env.config.mongodbUri,
      TEMPORAL_TASK_QUEUE: env.config.temporal.taskQueue,
      PUBLIC_BASE_URL: baseUrl,
      BASE_URL: baseUrl,
      CURL_HOME: home,
      // Nothing of a local `npm start` (.data/stack-env.json) leaks in.
      DATA_DIR: home,
    };
    try {
      const readme = shellBlocks(await readFile(join(ROOT, 'README.md'), 'utf8')).filter(
        (b) => b.mark === 'runnable',
      );
      expect(readme, 'README.md runnable blocks').to.not.be.empty;
      const quickStartVariables = readme[0]!.text;
      let ran = 0;
      // Every document runs, so one failing example does not hide another.
      const failures: string[] = [];
      for (const file of ['README.md', ...docs]) {
        const blocks = shellBlocks(await readFile(join(ROOT, file), 'utf8')).filter(
          (b) => b.mark === 'runnable',
        );
        expect(
          Boolean(SHOWN[file]),
          `${file} has runnable blocks, and the test says what they show`,
        ).to.equal(blocks.length > 0);
        if (!blocks.length) continue;
        const texts = blocks.map((b) => b.text);
        const script = (file === 'README.md' ? texts : [quickStartVariables, ...texts]).join('\n');
        const { code, output, stdout } = await bash(script, shellEnv);
        const missing = SHOWN[file]!.filter((shown) => !shown.test(stdout));
        if (code !== 0) failures.push(`${file} stopped (exit code ${code}):\n${output}`);
        else if (missing.length) failures.push(`${file} does not show ${missing.join(', ')}:\n${output}`);
        ran += blocks.length;
      }
      expect(failures, failures.join('\n\n')).to.deep.equal([]);
      console.log(`      ran ${ran} runnable block(s)`);
    } finally {
      forget();
    }
  });
});
