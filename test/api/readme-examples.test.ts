import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { answerSupportTriage } from '@test/helpers/chains';
import { useClientAndOrg } from '@test/helpers/client';
import { ROOT } from '@test/helpers/paths';

/** The shell blocks a document marks as runnable (```sh runnable), in order. */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh runnable\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** Runs `script` with bash as a newcomer's terminal would (stopping at the first failing command). */
function bash(script: string, env: NodeJS.ProcessEnv) {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, output })),
  );
}

// What a newcomer pastes from the README and docs/ works against the service as it is: each document's runnable
// blocks run in order in one shell (later blocks use the variables earlier ones set), and any command that
// fails (an example's error answer, curl's --fail-with-body on a non-2xx) fails the test.
describe('the runnable examples of README.md and docs/, as written', function () {
  this.timeout(600_000);
  const suite = useClientAndOrg('Readme Org');

  it('README.md has a quick start, and every runnable block there and in docs/ succeeds', async () => {
    const { env, baseUrl } = suite;
    // The model's part: the quick start's chain asks for JSON of its steps' shapes (other calls get the echo).
    const forget = answerSupportTriage(env);
    const docs = (await readdir(join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
    const shellEnv = {
      ...process.env,
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      // The CLI reaches the test stack's database with its signing secret, and names this API in --export.
      JWT_SECRET: env.config.auth.jwtSecret,
      MONGODB_URI: env.config.mongodbUri,
      PUBLIC_BASE_URL: baseUrl,
      BASE_URL: baseUrl,
      // Nothing of a local `npm start` (.data/stack-env.json) leaks in.
      DATA_DIR: await mkdtemp(join(tmpdir(), 'readme-')),
    };
    try {
      let ran = 0;
      for (const file of ['README.md', ...docs]) {
        const blocks = runnableBlocks(await readFile(join(ROOT, file), 'utf8'));
        if (file === 'README.md') expect(blocks, 'README.md runnable blocks').to.not.be.empty;
        if (!blocks.length) continue;
        const { code, output } = await bash(blocks.join('\n'), shellEnv);
        expect(code, `${file}:\n${output}`).to.equal(0);
        ran += blocks.length;
        if (file === 'README.md') {
          // What the quick start shows: the chat's reply, the rows, the file found, the run, the delivery.
          expect(output).to.contain('[message] conversation');
          expect(output).to.contain('inserted 2, refused');
          expect(output).to.contain('handbook.txt: ');
          expect(output).to.match(/^success/m);
          expect(output).to.match(/^whd_\S+ /m);
        }
      }
      console.log(`      ran ${ran} runnable block(s)`);
    } finally {
      forget();
    }
  });
});
