import { parseArgs } from 'node:util';
import { loadConfig } from '@lib/config';
import { closeDeps, createDeps, type Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { createLogger } from '@lib/logger';
import { ADMISSION_KINDS, type AdmissionKind } from '@lib/admission/kinds';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';

const USAGE = `Operator commands (each prints one line of JSON; add --help to any of them for its own line):
  bootstrap --org-name NAME --email EMAIL --name NAME [--export]
                                                        create an organization, its owner, a session and an API key;
                                                        --export prints shell lines instead: export API=… ORG=… KEY=…
  session --org ORG_ID --user USER_ID                   mint a user session token for a member
  org-change list --org ORG_ID                          pending name/abn changes
  org-change approve|reject --org ORG_ID --change ID    decide a pending change
  org-public --org ORG_ID --enabled true|false          allow the organization to publish public content
  credits grant --org ORG_ID --amount N [--note TEXT]   add N whole credits; a negative N (--amount=-N) corrects
  credits show --org ORG_ID [--limit N]                 balance, totals, prices, newest usage and grants (N, 20)
  admission show --org ORG_ID                           per kind (background work, turns): unfinished, bound, oldest age (s)
  admission set --org ORG_ID --kind KIND --limit N|default   the organization's own bound of one kind
                                                        (KIND: ${ADMISSION_KINDS.join(', ')})
  schedule fire --org ORG_ID --schedule TRIGGER_ID      fire a schedule trigger now (a fire workflow of its own)`;

/** The usage lines of one command (its first line starts with the command's name), or all of them. */
function usageOf(verb: string | undefined): string {
  const [head, ...lines] = USAGE.split('\n');
  const blocks: string[][] = [];
  for (const line of lines) {
    if (line.startsWith('  ') && !line.startsWith('   ')) blocks.push([line]);
    else blocks.at(-1)?.push(line);
  }
  const mine = blocks.filter((b) => verb && b[0]!.trimStart().split(' ')[0] === verb);
  return mine.length ? mine.map((b) => b.join('\n')).join('\n') : [head, ...lines].join('\n');
}

/** What `bootstrap --export` prints: shell lines a quick start pastes (values are ids, keys and a URL). */
function exportLines(apiUrl: string, result: { organizationId: string; apiKey: string }): string {
  const quote = (v: string) => `'${v.replaceAll("'", "'\\''")}'`;
  return `export API=${quote(apiUrl)} ORG=${quote(result.organizationId)} KEY=${quote(result.apiKey)}`;
}

type Flags = Record<string, string | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new AppError(2, 'usage', `--${name} is required\n\n${USAGE}`);
  return value;
}

function integer(flags: Flags, name: string, fallback?: number): number {
  const value =
    fallback !== undefined && flags[name] === undefined ? String(fallback) : required(flags, name);
  if (!/^-?\d+$/.test(value)) throw new AppError(2, 'usage', `--${name} must be a whole number\n\n${USAGE}`);
  return Number(value);
}

async function run(deps: Deps, command: string[], flags: Flags): Promise<unknown> {
  const [verb, sub] = command;
  const { organization, credits } = deps.services;
  switch (verb) {
    case 'bootstrap':
      return bootstrapOrganization(deps, {
        orgName: required(flags, 'org-name'),
        email: required(flags, 'email'),
        name: required(flags, 'name'),
      });
    case 'session': {
      const org = required(flags, 'org');
      const user = required(flags, 'user');
      if (!(await deps.repos.tenant(org).members.get(user)))
        throw new AppError(1, 'not_found', `user ${user} is not a member of ${org}`);
      return { sessionToken: (await deps.tokens.signSession(org, user)).token };
    }
    case 'org-change': {
      const org = required(flags, 'org');
      if (sub === 'list') return organization.pendingChanges(org);
      if (sub === 'approve' || sub === 'reject')
        return organization.decidePendingChange(org, required(flags, 'change'), sub === 'approve');
      break;
    }
    case 'credits': {
      const org = required(flags, 'org');
      if (sub === 'grant') return credits.grant(org, integer(flags, 'amount'), flags.note);
      if (sub === 'show')
        return credits.operatorSummary(org, Math.min(Math.max(integer(flags, 'limit', 20), 0), 1000));
      break;
    }
    case 'admission': {
      const org = required(flags, 'org');
      if (sub === 'show') return deps.services.admission.usage(org);
      if (sub === 'set') {
        const kind = required(flags, 'kind') as AdmissionKind;
        if (!ADMISSION_KINDS.includes(kind))
          throw new AppError(2, 'usage', `--kind must be one of ${ADMISSION_KINDS.join(', ')}`);
        const limit = flags.limit === 'default' ? null : integer(flags, 'limit');
        if (limit !== null && limit < 1)
          throw new AppError(2, 'usage', '--limit must be at least 1 (or default)');
        return deps.services.admission.setLimit(org, kind, limit);
      }
      break;
    }
    case 'org-public':
      return organization.setHostsPublicContent(
        required(flags, 'org'),
        required(flags, 'enabled') === 'true',
      );
    case 'schedule': {
      if (sub !== 'fire') break;
      const org = required(flags, 'org');
      const trigger = required(flags, 'schedule');
      const fired = await deps.services.scheduleSync.fireNow(org, trigger);
      if (!fired) throw new AppError(1, 'not_found', `schedule trigger ${trigger} is not in ${org}`);
      return { ...fired, fired: true };
    }
  }
  throw new AppError(2, 'usage', USAGE);
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      'org-name': { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      org: { type: 'string' },
      user: { type: 'string' },
      change: { type: 'string' },
      enabled: { type: 'string' },
      amount: { type: 'string' },
      note: { type: 'string' },
      limit: { type: 'string' },
      kind: { type: 'string' },
      schedule: { type: 'string' },
      export: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const { export: asShell, help, ...flags } = values;
  if (help || positionals.length === 0) {
    process.stdout.write(`${usageOf(positionals[0])}\n`);
    return;
  }
  const config = loadConfig();
  const deps = await createDeps(config, { logger: createLogger('silent') });
  try {
    const result = await run(deps, positionals, flags);
    process.stdout.write(
      asShell && positionals[0] === 'bootstrap'
        ? `${exportLines(config.publicBaseUrl, result as { organizationId: string; apiKey: string })}\n`
        : `${JSON.stringify(result)}\n`,
    );
  } finally {
    await closeDeps(deps);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof AppError && err.status === 2 ? 2 : 1);
});
