/**
 * Parsing a long PDF: memory and throughput of parseDocument on a generated 1,000-page PDF, the size the
 * knowledge-base worker must ingest without its RSS growing by more than 300 MB.
 *
 *   npm run bench -- parse-memory        (or: npx tsx bench/parse-memory.ts; it needs no stack)
 * Knobs (env): BENCH_PAGES (1000), BENCH_RENDER_PAGES (pages read through the vision path, 200; 0 skips it;
 * rendering runs at ~1-3 pages/s on a busy 2-core machine, so all 1,000 take several minutes).
 *
 * The PDFs are generated once into a temporary folder; each measurement then runs in a fresh process (RSS
 * never shrinks back, so one run's garbage would distort the next) that loads pdf.js and the canvas on a
 * 2-page warm-up, collects garbage, takes RSS as its baseline, samples RSS every 20 ms while it works, and
 * reports the peak growth, the figure that matters for a worker:
 * - `auto`: parseDocument on the text PDF (text layer, page by page, each page released);
 * - `llm-vision`: parseDocument on a BENCH_RENDER_PAGES-page PDF of the same kind, every page rendered to
 *   PNG and handed to a stub vision reader (the memory-heavy path: rendered pages must not pile up);
 * - `bare`, the baseline: pdf.js used directly on the text PDF, extracting the same text but keeping every
 *   page, as a naive loop would.
 * The baseline RSS itself (~450 MB) is mostly tsx compiling pdf.js's large ES modules on load; under plain
 * node, pdf.js loaded and one page parsed leave ~100 MB.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { parseDocument, type VisionReader } from '@lib/knowledge-bases/parsing';

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const PAGES = num('BENCH_PAGES', 1000);
const RENDER_PAGES = num('BENCH_RENDER_PAGES', 200);
const MB = 1024 * 1024;
const LIMIT_MB = 300;
const MODES = ['auto', 'llm-vision', 'bare'] as const;
type Mode = (typeof MODES)[number];

const WORDS =
  'ledger invoice quarter margin audit supplier freight tariff rebate accrual forecast budget'.split(' ');

/** A PDF of `pages` pages, each ~2,000 characters of text in 30 lines (a dense report page). */
async function makePdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 1; p <= pages; p++) {
    const page = doc.addPage([595, 842]);
    for (let line = 0; line < 30; line++) {
      const words = Array.from({ length: 11 }, (_, w) => WORDS[(p * 31 + line * 7 + w) % WORDS.length]);
      page.drawText(`${p}.${line} ${words.join(' ')}.`, { x: 40, y: 800 - line * 25, font, size: 10 });
    }
  }
  return doc.save();
}

interface Result {
  mode: Mode;
  pages: number;
  seconds: number;
  baselineMb: number;
  peakGrowthMb: number;
}

let visionCalls = 0;
const vision: VisionReader = ({ bytes }) => {
  visionCalls++;
  return Promise.resolve(`page image of ${bytes.length} bytes`);
};

async function runMode(mode: Mode, bytes: Uint8Array): Promise<number> {
  if (mode === 'bare') {
    const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
    const pdf = await pdfjs.getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
    const kept: unknown[] = [];
    for (let i = 1; i <= pdf.numPages; i++) {
      const page = await pdf.getPage(i);
      kept.push(page, await page.getTextContent());
    }
    await pdf.destroy();
    return kept.length / 2;
  }
  visionCalls = 0;
  const doc = await parseDocument({ fileName: 'long.pdf', bytes, strategy: mode, vision });
  if (mode === 'llm-vision' && visionCalls !== doc.pageCount)
    throw new Error(`only ${visionCalls} vision calls`);
  if (doc.segments.length !== doc.pageCount) throw new Error(`${doc.segments.length} segments`);
  return doc.segments.length;
}

/** One measurement, in this (fresh) process: prints its Result as JSON. */
async function child(mode: Mode, file: string): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const bytes = new Uint8Array(readFileSync(file));
  await parseDocument({ fileName: 'warm.pdf', bytes: await makePdf(2), strategy: 'llm-vision', vision });
  gc();
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  const start = performance.now();
  const pages = await runMode(mode, bytes);
  const seconds = (performance.now() - start) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  const result: Result = {
    mode,
    pages,
    seconds,
    baselineMb: baseline / MB,
    peakGrowthMb: (peak - baseline) / MB,
  };
  console.log(JSON.stringify(result));
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'parse-bench-'));
  try {
    writeFileSync(join(dir, 'text.pdf'), await makePdf(PAGES));
    if (RENDER_PAGES > 0) writeFileSync(join(dir, 'render.pdf'), await makePdf(RENDER_PAGES));
    console.log(`generated a ${PAGES}-page PDF (and a ${RENDER_PAGES}-page one for rendering)`);
    const results: Result[] = [];
    for (const mode of MODES) {
      if (mode === 'llm-vision' && RENDER_PAGES === 0) continue;
      const file = join(dir, mode === 'llm-vision' ? 'render.pdf' : 'text.pdf');
      const run = spawnSync(
        process.execPath,
        [join(process.cwd(), 'node_modules/tsx/dist/cli.mjs'), __filename],
        {
          env: { ...process.env, BENCH_CHILD_MODE: mode, BENCH_CHILD_FILE: file },
          encoding: 'utf8',
          maxBuffer: 16 * MB,
        },
      );
      const line = run.stdout.trim().split('\n').pop() ?? '';
      if (run.status !== 0 || !line.startsWith('{')) throw new Error(`${mode} failed: ${run.stderr}`);
      const r = JSON.parse(line) as Result;
      results.push(r);
      console.log(
        `${r.mode.padEnd(11)} ${String(r.pages).padStart(5)} pages  ${(r.pages / r.seconds).toFixed(1).padStart(6)} pages/s  ` +
          `baseline RSS ${r.baselineMb.toFixed(0)} MB  peak growth ${r.peakGrowthMb.toFixed(0).padStart(4)} MB`,
      );
    }
    report(results);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function report(results: Result[]): void {
  const auto = results.find((r) => r.mode === 'auto');
  const bare = results.find((r) => r.mode === 'bare');
  if (auto && bare) {
    const speed = auto.pages / auto.seconds / (bare.pages / bare.seconds);
    console.log(
      `auto vs bare pdf.js keeping pages: ${speed.toFixed(2)}x the pages/s, ` +
        `peak growth ${auto.peakGrowthMb.toFixed(0)} MB vs ${bare.peakGrowthMb.toFixed(0)} MB`,
    );
  }
  const over = results.filter((r) => r.mode !== 'bare' && r.peakGrowthMb >= LIMIT_MB);
  if (over.length > 0) {
    console.log(`FAIL: peak RSS growth at or above ${LIMIT_MB} MB for ${over.map((r) => r.mode).join(', ')}`);
    process.exitCode = 1;
  } else {
    console.log(`ok: parseDocument's peak RSS growth stays below ${LIMIT_MB} MB`);
  }
}

const childMode = process.env.BENCH_CHILD_MODE as Mode | undefined;
(childMode ? child(childMode, process.env.BENCH_CHILD_FILE ?? '') : main()).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
