import { expect } from 'chai';
import type { Caller, Identity } from '../fixtures/authorization-oracle';
import type { TestEnv } from './env';
import { addMember, as, createTestOrg, type TestOrg, type TestUser } from './org';

/** One organization of the authorization matrix: its members, two user groups and their agents. */
export interface MatrixOrg {
  org: TestOrg;
  members: Record<Identity, TestUser>;
  /** chat (and admin) are in group A, chat2 in group B; agentA is mapped to A, agentB to B, common to both. */
  groups: { A: string; B: string };
  agents: { A: string; B: string; common: string; spare: string; spare2: string };
  /** An ORGANIZATION knowledge base and a chain nobody attaches at seeding, for attach requests. */
  spareKb: string;
  spareChain: string;
  /** The workflow id of a chain that runs on files, for knowledge base ETL rules. */
  fileChainWorkflowId: string;
  /** Resources made once per organization and identity, keyed by scene. */
  made: Map<string, Promise<Record<string, string>>>;
}

export interface MatrixWorld {
  env: TestEnv;
  main: MatrixOrg;
  other: MatrixOrg;
  tokens: Map<string, string>;
  /** An assume-role token of the main organization, for verify requests. */
  sampleToken: string;
}

/** Sends `body` as `token` and expects `status`; returns the response body. */
export async function call(
  env: TestEnv,
  token: string,
  method: 'get' | 'post' | 'put' | 'delete',
  path: string,
  body?: object,
  status = method === 'post' ? 201 : 200,
): Promise<Record<string, unknown>> {
  const client = as(env, token);
  const res =
    method === 'get' || method === 'delete' ? await client[method](path) : await client[method](path, body);
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(status);
  return res.body as Record<string, unknown>;
}

export const idOf = (body: Record<string, unknown>, field: string) => String(body[field]);

async function createAgent(env: TestEnv, org: TestOrg, name: string) {
  const body = await call(env, org.owner.token, 'post', org.path('/agents'), {
    name,
    description: 'matrix agent',
    instructions: 'Answer briefly.',
    model: 'matrix-model',
  });
  return idOf(body, 'id');
}

async function createGroup(env: TestEnv, org: TestOrg, name: string, userIds: string[], agentIds: string[]) {
  const token = org.owner.token;
  const groupId = idOf(
    await call(env, token, 'post', org.path('/groups'), { name, description: name }),
    'userGroupId',
  );
  for (const userId of userIds)
    await call(env, token, 'post', org.path(`/groups/${groupId}/users`), { userId }, 200);
  for (const agentId of agentIds)
    await call(env, token, 'post', org.path(`/groups/${groupId}/agents`), { agentId });
  return groupId;
}

async function seedOrg(env: TestEnv, name: string): Promise<MatrixOrg> {
  const org = await createTestOrg(env, name);
  const chat2 = await addMember(env, org.organizationId, 'chat', 'Cleo Chat');
  const members = { owner: org.owner, admin: org.admin, chat: org.chat, chat2 };
  const agents = {
    A: await createAgent(env, org, 'Agent A'),
    B: await createAgent(env, org, 'Agent B'),
    common: await createAgent(env, org, 'Common agent'),
    spare: await createAgent(env, org, 'Spare'),
    spare2: await createAgent(env, org, 'Spare 2'),
  };
  const groups = {
    A: await createGroup(env, org, 'Group A', [org.admin.userId, org.chat.userId], [agents.A, agents.common]),
    B: await createGroup(env, org, 'Group B', [chat2.userId], [agents.B, agents.common]),
  };
  const spareKb = idOf(
    await call(env, org.admin.token, 'post', org.path('/knowledgebases'), {
      title: 'Spare',
      llmDescription: 'spare',
      type: 'ORGANIZATION',
    }),
    'knowledgeBaseId',
  );
  const chain = await call(env, org.admin.token, 'post', org.path('/chains'), {
    name: 'Spare chain',
    description: 'spare',
    llmInstructions: 'Be brief.',
  });
  const fileProperty = { type: 'string' };
  const fileChain = await call(env, org.admin.token, 'post', org.path('/chains'), {
    name: 'File chain',
    description: 'runs on files',
    llmInstructions: 'Be brief.',
    inputType: 'file',
    steps: [
      {
        stepOrder: 1,
        name: 'read',
        instructions: 'Read {{input.fileName}}.',
        inputSchema: {
          type: 'object',
          properties: { fileId: fileProperty, knowledgeBaseId: fileProperty, fileName: fileProperty },
        },
      },
    ],
  });
  return {
    org,
    members,
    groups,
    agents,
    spareKb,
    spareChain: idOf(chain, 'actionChainId'),
    fileChainWorkflowId: idOf(fileChain, 'workflowId'),
    made: new Map(),
  };
}

async function credential(env: TestEnv, main: MatrixOrg, caller: Caller): Promise<string> {
  const { org, members } = main;
  if (caller.via === 'session') return members[caller.identity].token;
  const admin = members.admin.token;
  if (caller.via === 'assume_role') {
    const body = await call(
      env,
      admin,
      'post',
      org.path('/assume-role'),
      { userId: members[caller.identity].userId, permissions: caller.tokenPermissions },
      200,
    );
    return idOf(body, 'token');
  }
  const body = await call(env, admin, 'post', org.path('/api-keys'), {
    description: caller.name,
    permissions: caller.permissions,
  });
  return idOf(body, 'key');
}

/** Two organizations with their members, groups and agents, and a credential for every caller. */
export async function seedWorld(env: TestEnv, callers: Caller[]): Promise<MatrixWorld> {
  const main = await seedOrg(env, 'Matrix Org');
  const other = await seedOrg(env, 'Other Org');
  const tokens = new Map<string, string>();
  for (const caller of callers) tokens.set(caller.name, await credential(env, main, caller));
  const sampleToken = tokens.get('assume-role token');
  if (!sampleToken) throw new Error('the matrix needs an assume-role caller');
  return { env, main, other, tokens, sampleToken };
}
