import type { Role } from '@lib/users/member.schema';

/** Every capability a route can require. Routes declare one with `x-capability` in openapi.yaml. */
export const CAPABILITIES = [
  'org.read',
  'org.write',
  'org.billing', // see subscription details and change billing visibility
  'users.read', // read one member
  'users.list',
  'users.manage', // add, change role, remove non-owner members
  'users.manage_owners', // remove owners
  'groups.manage',
  'api_keys.manage',
  'assume_role.mint',
  'tables.read',
  'tables.write',
  'schedules.manage',
  'webhooks.manage',
  'agents.use',
  'agents.manage',
  'agents.all', // list every agent with all=true; access to every agent
  'conversations.use',
  'conversations.all',
  'knowledge_bases.use',
  'knowledge_bases.manage',
  'chains.use',
  'chains.manage',
  'artifacts.use',
  'artifacts.manage', // read and change every artifact of the organization, whoever made it
  'apps.manage',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

const CHAT: Capability[] = [
  'org.read',
  'users.read',
  'tables.read',
  'agents.use',
  'conversations.use',
  'knowledge_bases.use',
  'chains.use',
  'artifacts.use',
];
const ADMIN: Capability[] = CAPABILITIES.filter((c) => c !== 'users.manage_owners' && c !== 'org.billing');
const OWNER: Capability[] = [...CAPABILITIES];

export const ROLE_CAPABILITIES: Record<Role, ReadonlySet<Capability>> = {
  owner: new Set(OWNER),
  admin: new Set(ADMIN),
  chat: new Set(CHAT),
};

export function isCapability(value: unknown): value is Capability {
  return typeof value === 'string' && (CAPABILITIES as readonly string[]).includes(value);
}
