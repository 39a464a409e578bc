// What every example needs: the service's URL (BASE_URL, default http://127.0.0.1:3000), a credential and the
// organization from the command line, and a way to stop on an error answer.
import { parseArgs } from 'node:util';
import { createClient } from '../clients/typescript/src';

export const baseUrl = process.env.BASE_URL ?? 'http://127.0.0.1:3000';

/**
 * The client for `--org ORG --token TOKEN` and the example's own options (each required); TOKEN is a session
 * token, an assume-role token or an API key (README, "Getting credentials").
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
    options: Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
  });
  const given = values as Record<string, string | undefined>;
  const missing = names.filter((name) => !given[name]);
  if (missing.length) {
    const usage = names.map((name) => `--${name} ${name.toUpperCase()}`).join(' ');
    console.error(`usage: npx tsx examples/${example}.ts ${usage}${rest && ` ${rest}`}`);
    process.exit(2);
  }
  const args = given as Record<'org' | 'token' | Name, string>;
  return {
    args,
    positionals,
    client: createClient({ baseUrl, token: args.token }),
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

/** Runs an example: a refused connection or a failed request prints why and exits non-zero. */
export function run(main: () => Promise<void>) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
