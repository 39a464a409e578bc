// What every example needs: the service's URL, a credential and the organization from the command line, and a
// way to stop on an error answer.
import { existsSync, readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from '../clients/typescript/src';

/** The address `npm start` serves on, as it wrote it for the CLI (README "Quick start"), if it did. */
function startedUrl(): string | undefined {
  const file = resolvePath(__dirname, '..', process.env.DATA_DIR ?? '.data', 'stack-env.json');
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { PUBLIC_BASE_URL?: string }).PUBLIC_BASE_URL;
}

/** The service's URL: `--url`, else BASE_URL, else where `npm start` serves, else http://127.0.0.1:3000. */
let serviceUrl = process.env.BASE_URL ?? startedUrl() ?? 'http://127.0.0.1:3000';

/**
 * The client for `--org ORG --token TOKEN` and the example's own options (each required); TOKEN is a session
 * token, an assume-role token or an API key (docs/identity.md, "Getting credentials").
 */
export function connect<const Name extends string>(
  example: string,
  options: readonly Name[] = [],
  /** what follows the options in the usage line */
  rest = '',
) {
  const names = ['org', 'token', ...options];
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: Object.fromEntries(['url', ...names].map((name) => [name, { type: 'string' as const }])),
  });
  const given = values as Record<string, string | undefined>;
  if (given.url) serviceUrl = given.url;
  const missing = names.filter((name) => !given[name]);
  if (missing.length) {
    const usage = names.map((name) => `--${name} ${name.toUpperCase()}`).join(' ');
    console.error(`usage: npx tsx examples/${example}.ts [--url URL] ${usage}${rest && ` ${rest}`}`);
    process.exit(2);
  }
  const args = given as Record<'org' | 'token' | Name, string>;
  return {
    args,
    positionals,
    baseUrl: serviceUrl,
    client: createClient({ baseUrl: serviceUrl, token: args.token }),
    /** the organization as the `organizationId` path parameter */
    org: { organizationId: args.org },
  };
}

/** The data of a call that succeeded; an error answer (`{ error: { code, message } }`) ends the example. */
export function must<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || result.data === undefined) {
    console.error(result.response.status, JSON.stringify(result.error));
    process.exit(1);
  }
  return result.data;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether an error says nothing answered at the address (fetch's cause, or socket.io's connect error). */
function unreachable(err: unknown): boolean {
  const { message, cause } = (err ?? {}) as { message?: string; cause?: { code?: string } };
  return (
    ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNRESET'].includes(cause?.code ?? '') ||
    /xhr poll error|websocket error/.test(message ?? '')
  );
}

/** Runs an example: a refused connection or a failed request prints why and exits non-zero. */
export function run(main: () => Promise<void>) {
  main().catch((err: unknown) => {
    console.error(
      unreachable(err)
        ? `cannot reach the API at ${serviceUrl}: is \`npm start\` running there? (set BASE_URL or pass --url)`
        : err instanceof Error
          ? err.message
          : err,
    );
    process.exit(1);
  });
}
