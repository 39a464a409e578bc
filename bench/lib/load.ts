import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LoadTarget {
  name: string;
  baseUrl: string;
  agent: Agent;
}

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

/** A keep-alive agent with one socket per client, so every client reuses its connection. */
export function keepAliveAgent(concurrency: number): Agent {
  return new Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
}

/** One request; resolves with the status and body once the body has been read completely. */
export function send(
  baseUrl: string,
  agent: Agent,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: object,
): Promise<{ status: number; body: string }> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const allHeaders = data
    ? { ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(data)) }
    : headers;
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, agent, headers: allHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** One GET of a load target. */
export function get(target: LoadTarget, path: string, headers: Record<string, string>) {
  return send(target.baseUrl, target.agent, 'GET', path, headers);
}

/** `concurrency` closed-loop clients each send the next request as soon as the previous answer is read. */
export async function runLoad(
  target: LoadTarget,
  path: string,
  headers: Record<string, string>,
  concurrency: number,
  durationMs: number,
): Promise<LoadResult> {
  const latenciesMs: number[] = [];
  let errors = 0;
  const started = performance.now();
  const end = started + durationMs;
  const client = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        const res = await get(target, path, headers);
        if (res.status !== 200) errors++;
      } catch {
        errors++;
      }
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return { requests: latenciesMs.length, errors, seconds: (performance.now() - started) / 1000, latenciesMs };
}

export function merge(results: LoadResult[]): LoadResult {
  return {
    requests: results.reduce((n, r) => n + r.requests, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    seconds: results.reduce((n, r) => n + r.seconds, 0),
    latenciesMs: results.flatMap((r) => r.latenciesMs),
  };
}

export function summarize(r: LoadResult) {
  const sorted = Float64Array.from(r.latenciesMs).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { rps: r.requests / r.seconds, p50: at(0.5), p99: at(0.99), errors: r.errors, requests: r.requests };
}

/** A plain fixed-width table. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
