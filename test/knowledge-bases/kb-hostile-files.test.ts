import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { lastUserImageUrls } from '@test/helpers/llm';
import { testEnv, type TestEnv } from '@test/helpers/env';
import {
  amplifyingCsv,
  deepJson,
  docxBomb,
  docxLaughs,
  docxOfManyEntries,
  pdfNested,
  pdfOfPages,
} from '@test/helpers/hostile-files';
import { createKb, settled, uploadFile } from '@test/helpers/kb';
import { as, createTestOrg } from '@test/helpers/org';
import { eventually } from '@test/helpers/wait';
import { childProcessEnv, spawnEntry, startWorkerProcess, stopProcess } from '@test/helpers/worker-process';
import { makePng } from '@test/knowledge-bases/parsing-fixtures';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The attempt the parse activity of a file's first ingestion run ended on (1: it was never retried). */
async function parseAttempts(env: TestEnv, organizationId: string, fileId: string): Promise<number> {
  const history = await env.deps.temporal.client.workflow
    .getHandle(`ingest-${organizationId}-${fileId}-1`)
    .fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'parseFile',
  );
  const started = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
  );
  return started?.activityTaskStartedEventAttributes?.attempt ?? 0;
}

/** Alive: signal 0 checks that the process exists without touching it. */
function alive(child: ChildProcess): boolean {
  if (child.exitCode !== null || child.signalCode !== null) return false;
  return process.kill(child.pid!, 0);
}

describe('hostile files in a knowledge base (issue 32)', () => {
  const workers: ChildProcess[] = [];
  after(async () => {
    workers.forEach((w) => w.kill('SIGKILL'));
    // Later files count the model requests of the shared scripted LLM: leave none of ours behind.
    (await testEnv()).llm.reset();
  });

  it('end in ERROR naming the limit they went over, once each, and the worker process survives them all', async function () {
    this.timeout(600_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'Hostile Files Org');
    // A smaller parse heap than the default, so that a file of a few MB can need more than it.
    const worker = spawnEntry('worker/main.ts', { ...childProcessEnv(env), KB_PARSE_MAX_HEAP_MB: '64' });
    workers.push(worker);
    const pid = worker.pid;
    const kb = await createKb(env, org);
    const cases = [
      {
        name: 'objects.json',
        bytes: '[' + '{"a":[]},'.repeat(1_500_000) + '1]',
        type: 'application/json',
        message: /KB_PARSE_MAX_HEAP_MB/,
      },
      { name: 'bomb.docx', bytes: docxBomb(), type: DOCX, message: /KB_ZIP_MAX_RATIO/ },
      { name: 'laughs.docx', bytes: docxLaughs(), type: DOCX, message: /declares a DTD/ },
      { name: 'parts.docx', bytes: docxOfManyEntries(20_000), type: DOCX, message: /KB_ZIP_MAX_ENTRIES/ },
      { name: 'pages.pdf', bytes: pdfOfPages(6000), type: 'application/pdf', message: /KB_PDF_MAX_PAGES/ },
      {
        name: 'nested.pdf',
        bytes: pdfNested(100_000),
        type: 'application/pdf',
        message: /nested too deeply/,
      },
      {
        name: 'deep.json',
        bytes: deepJson(20_000),
        type: 'application/json',
        message: /KB_PARSE_MAX_TEXT_CHARS/,
      },
      {
        name: 'wide.csv',
        bytes: amplifyingCsv(500, 2000),
        type: 'text/csv',
        message: /KB_PARSE_MAX_TEXT_CHARS/,
      },
      {
        name: 'deep.xml',
        bytes: '<a>'.repeat(5000) + '</a>'.repeat(5000),
        type: 'application/xml',
        message: /KB_XML_MAX_DEPTH/,
      },
    ];
    const files = [];
    for (const c of cases) files.push(await uploadFile(env, org, kb, c.name, c.bytes, c.type));
    for (const [i, c] of cases.entries()) {
      const file = await settled(env, org, kb, files[i]!.fileId, 300_000);
      expect(file.status, c.name).to.equal('ERROR');
      expect(file.statusMessage, c.name).to.match(c.message);
      expect(file.statusMessage, c.name).to.include(c.name);
      // A limit is deterministic: the parse was not retried into it.
      expect(await parseAttempts(env, org.organizationId, files[i]!.fileId), c.name).to.equal(1);
    }
    // The same worker process, still the same pid, reads an ordinary file afterwards.
    const fine = await uploadFile(env, org, kb, 'fine.txt', 'An ordinary note about the roof repairs.');
    expect((await settled(env, org, kb, fine.fileId, 300_000)).status).to.equal('READY');
    expect(alive(worker)).to.equal(true);
    expect(worker.pid).to.equal(pid);
    // No other test's task may land on it.
    await stopProcess(worker);
  });

  it('an XLSX, a zip format the service does not read, is refused at upload-url', async () => {
    const env = await testEnv();
    const org = await createTestOrg(env, 'Hostile Xlsx Org');
    const kb = await createKb(env, org);
    await as(env, org.admin.token)
      .post(org.path(`/knowledgebases/${kb}/files/upload-url`), {
        fileName: 'laughs.xlsx',
        contentType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      })
      .expect(400);
  });

  it('a parse whose worker dies is retried once under the strict budget; dying again ends the file in ERROR', async function () {
    this.timeout(600_000);
    const env = await testEnv();
    const org = await createTestOrg(env, 'Poison Pill Org');
    const kb = await createKb(env, org);
    // Vision requests are never answered: each parse is in the middle of its work when its worker dies.
    const isVision = (body: Parameters<typeof lastUserImageUrls>[0]) => lastUserImageUrls(body).length > 0;
    env.llm.on(isVision, () => new Promise(() => undefined), 2);
    const visionRequests = () => env.llm.chatRequests.filter(isVision).length;
    const before = visionRequests();
    const file = await uploadFile(env, org, kb, 'photo.png', await makePng(), 'image/png');
    const marker = async () =>
      (await env.deps.repos.tenant(org.organizationId).kbFiles.getIncludingDeleted(file.fileId))
        ?.parseAttempt;
    // Attempt 1 parses, attempt 2 parses again under the strict budget; each worker is killed mid-parse.
    for (const [n, mark] of [
      [1, /#1$/],
      [2, /#2#strict$/],
    ] as const) {
      const worker = startWorkerProcess(env);
      workers.push(worker);
      await eventually(() => visionRequests() === before + n, 300_000);
      expect(await marker()).to.match(mark);
      worker.kill('SIGKILL');
      await new Promise((resolve) => worker.once('exit', resolve));
    }

    const third = startWorkerProcess(env);
    workers.push(third);
    const final = await settled(env, org, kb, file.fileId, 300_000);
    expect(final.status).to.equal('ERROR');
    expect(final.statusMessage).to.match(/crashed the worker that parsed it \(attempt 2 stopped/);
    // The third attempt did not parse again (no third model call), and no fourth attempt followed.
    expect(visionRequests()).to.equal(before + 2);
    expect(await parseAttempts(env, org.organizationId, file.fileId)).to.equal(3);
    expect(alive(third)).to.equal(true);
    await stopProcess(third);
  });
});
