import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { newId } from '@lib/ids';
import { bootstrapOrganization } from '@lib/organization/bootstrap.service';
import type { Role } from '@lib/users/member.schema';
import { testEnv, type TestEnv } from './env';

export interface TestUser {
  userId: string;
  email: string;
  token: string;
}

export interface TestOrg {
  organizationId: string;
  owner: TestUser;
  admin: TestUser;
  chat: TestUser;
  /** All-permissions API key created by the owner. */
  apiKey: string;
  path: (suffix?: string) => string;
}

/** Adds a member with a fresh account and returns a session token for them. */
export async function addMember(
  env: TestEnv,
  organizationId: string,
  role: Role,
  name: string = role,
): Promise<TestUser> {
  const email = `${role}-${newId('u').slice(2).toLowerCase()}@example.test`;
  const user = await env.deps.repos.accounts.create({ email, name });
  await env.deps.repos.tenant(organizationId).members.add(user, role);
  const { token } = await env.deps.tokens.signSession(organizationId, user._id);
  return { userId: user._id, email, token };
}

/** A new organization with an owner, an admin and a chat member: every test makes its own. */
export async function createTestOrg(env: TestEnv, name = 'Test Org'): Promise<TestOrg> {
  const ownerEmail = `owner-${newId('u').slice(2).toLowerCase()}@example.test`;
  const boot = await bootstrapOrganization(env.deps, {
    orgName: name,
    email: ownerEmail,
    name: 'Olive Owner',
  });
  // One after the other: member lists are ordered by creation.
  const admin = await addMember(env, boot.organizationId, 'admin', 'Adam Admin');
  const chat = await addMember(env, boot.organizationId, 'chat', 'Chad Chat');
  return {
    organizationId: boot.organizationId,
    owner: { userId: boot.userId, email: ownerEmail, token: boot.sessionToken },
    admin,
    chat,
    apiKey: boot.apiKey,
    path: (suffix = '') => `/orgs/${boot.organizationId}${suffix}`,
  };
}

/** supertest bound to the app (of the env, or of another replica) with a bearer token. */
export function as(env: Pick<TestEnv, 'app'>, token: string) {
  const agent = request(env.app);
  const auth = { Authorization: `Bearer ${token}` };
  return {
    get: (url: string) => agent.get(url).set(auth),
    post: (url: string, body?: object) => agent.post(url).set(auth).send(body),
    put: (url: string, body?: object) => agent.put(url).set(auth).send(body),
    delete: (url: string) => agent.delete(url).set(auth),
  };
}

/**
 * For tests of a repository against the real database: the shared environment, and before each test a fresh
 * organization and a fresh tag for ids, so reruns against the same database never collide. Its fields are set by
 * the hooks: read them inside tests.
 */
export function orgPerTest(name: string): { env: TestEnv; org: TestOrg; tag: string } {
  const world = {} as { env: TestEnv; org: TestOrg; tag: string };
  before(async () => {
    world.env = await testEnv();
  });
  beforeEach(async () => {
    world.org = await createTestOrg(world.env, name);
    world.tag = randomBytes(6).toString('hex');
  });
  return world;
}
