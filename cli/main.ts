import { parseArgs } from 'node:util';
import { TokenService } from '@lib/auth/tokens';
import { loadConfig } from '@lib/config';
import { connectDatabase, type Models } from '@lib/db/models';
import { AppError } from '@lib/errors';
import { MembersRepository } from '@lib/repositories/members.repository';
import { OrganizationRepository } from '@lib/repositories/organizations.repository';
import { bootstrapOrganization } from '@lib/services/bootstrap.service';
import { decidePendingChange, toSettingsView } from '@lib/services/organization.service';
import { ROLE_CAPABILITIES } from '@lib/auth/roles';

const USAGE = `Operator commands (each prints one line of JSON):
  bootstrap --org-name NAME --email EMAIL --name NAME   create an organization, its owner, a session and an API key
  session --org ORG_ID --user USER_ID                   mint a user session token for a member
  org-change list --org ORG_ID                          pending name/abn changes
  org-change approve|reject --org ORG_ID --change ID    decide a pending change
  org-public --org ORG_ID --enabled true|false          allow the organization to publish public content`;

type Flags = Record<string, string | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new AppError(2, 'usage', `--${name} is required\n\n${USAGE}`);
  return value;
}

async function run(models: Models, tokens: TokenService, command: string[], flags: Flags): Promise<unknown> {
  const [verb, sub] = command;
  switch (verb) {
    case 'bootstrap':
      return bootstrapOrganization(models, tokens, {
        orgName: required(flags, 'org-name'),
        email: required(flags, 'email'),
        name: required(flags, 'name'),
      });
    case 'session': {
      const org = required(flags, 'org');
      const user = required(flags, 'user');
      if (!(await new MembersRepository(models, org).get(user)))
        throw new AppError(1, 'not_found', `user ${user} is not a member of ${org}`);
      return { sessionToken: (await tokens.signSession(org, user)).token };
    }
    case 'org-change': {
      const org = required(flags, 'org');
      if (sub === 'list') {
        const doc = await new OrganizationRepository(models, org).get();
        if (!doc) throw new AppError(1, 'not_found', `organization ${org} not found`);
        return toSettingsView(doc, { capabilities: ROLE_CAPABILITIES.owner }).pendingChanges;
      }
      if (sub === 'approve' || sub === 'reject')
        return decidePendingChange(models, org, required(flags, 'change'), sub === 'approve');
      break;
    }
    case 'org-public': {
      const org = required(flags, 'org');
      const enabled = required(flags, 'enabled') === 'true';
      const doc = await new OrganizationRepository(models, org).update({ hostsPublicContent: enabled });
      if (!doc) throw new AppError(1, 'not_found', `organization ${org} not found`);
      return { organizationId: org, hostsPublicContent: doc.hostsPublicContent };
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
    },
  });
  const config = loadConfig();
  const { conn, models } = await connectDatabase(config.mongodbUri);
  try {
    const tokens = new TokenService(config.auth.jwtSecret, config.auth.issuer, config.auth.sessionTtlSeconds);
    const result = await run(models, tokens, positionals, values);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await conn.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof AppError && err.status === 2 ? 2 : 1);
});
