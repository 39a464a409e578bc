import { newId } from '@lib/ids';
import type { Kind } from '../fixtures/authorization-matrix';
import type { Identity } from '../fixtures/authorization-oracle';
import { appHtml } from './artifacts';
import { call, idOf, type MatrixOrg } from './authz-world';
import type { TestEnv } from './env';
import { addMember } from './org';

/** The ids a request of one resource kind fills its path (and body) with, by path parameter name. */
export type Scene = Record<string, string>;

/** The user group a member is in (owners are in none and use every agent; A stands for them). */
export const groupOf = (identity: Identity) => (identity === 'chat2' ? 'B' : 'A');

/** `fresh`: the scene must be new (its own agent too), for a request that uses it up. */
type Maker = (
  env: TestEnv,
  o: MatrixOrg,
  creator: Identity,
  variant: string,
  fresh: boolean,
) => Promise<Scene>;

/** An agent of `group`: the seeded one, or a new one mapped to that group. */
async function agentOf(env: TestEnv, o: MatrixOrg, group: 'A' | 'B', fresh: boolean) {
  if (!fresh) return o.agents[group];
  const token = o.members.owner.token;
  const body = { name: 'Fresh', description: 'matrix', instructions: 'Be brief.', model: 'matrix-model' };
  const agentId = idOf(await call(env, token, 'post', o.org.path('/agents'), body), 'id');
  await call(env, token, 'post', o.org.path(`/groups/${o.groups[group]}/agents`), { agentId });
  return agentId;
}

async function conversation(env: TestEnv, o: MatrixOrg, creator: Identity): Promise<Scene> {
  const token = o.members[creator].token;
  // An agent both chat members use: only the conversation's creator sets a peer's conversation apart.
  const agentId = o.agents.common;
  const path = o.org.path('/conversations');
  const conv = await call(env, token, 'post', path, { agentId, title: 'Matrix', isBrowserTask: true });
  const conversationId = idOf(conv, 'conversationId');
  const repos = env.deps.repos.tenant(o.org.organizationId);
  const planId = newId('pln');
  const steps = [{ stepId: 's1', description: 'Look around', status: 'in_progress' as const }];
  await repos.taskPlans.create(
    planId,
    { conversationId, agentId, type: 'general', requestId: 'matrix', steps },
    'active',
  );
  const analysis = await call(env, token, 'post', `${path}/${conversationId}/analysis`, {
    title: 'Question',
  });
  const sessionId = newId('bws');
  await repos.browserSessions.create(sessionId, { type: 'conversation', conversationId }, new Date());
  return { conversationId, planId, analysisId: idOf(analysis, 'analysisId'), sessionId };
}

/** The personal knowledge base of an agent of `group` (`forAgentId`: made on first ask). */
async function agentKnowledgeBase(env: TestEnv, o: MatrixOrg, group: 'A' | 'B', fresh: boolean) {
  const agentId = await agentOf(env, o, group, fresh);
  const path = o.org.path(`/knowledgebases?forAgentId=${agentId}`);
  const page = await call(env, o.members.owner.token, 'get', path);
  return idOf((page.items as Array<Record<string, unknown>>)[0] ?? {}, 'knowledgeBaseId');
}

/** variant: `organization`, `personal` (the creator's), or `agent-A` / `agent-B` (an agent's of that group). */
async function knowledgeBase(
  env: TestEnv,
  o: MatrixOrg,
  creator: Identity,
  variant: string,
  fresh: boolean,
): Promise<Scene> {
  const token = o.members[creator].token;
  const type = variant === 'organization' ? 'ORGANIZATION' : 'PERSONAL';
  const knowledgeBaseId = variant.startsWith('agent-')
    ? await agentKnowledgeBase(env, o, variant.endsWith('B') ? 'B' : 'A', fresh)
    : idOf(
        await call(env, token, 'post', o.org.path('/knowledgebases'), {
          title: `${creator} ${type}`,
          llmDescription: 'matrix',
          type,
        }),
        'knowledgeBaseId',
      );
  const base = o.org.path(`/knowledgebases/${knowledgeBaseId}`);
  const file = await call(env, token, 'post', `${base}/files/upload-url`, {
    fileName: 'notes.txt',
    contentType: 'text/plain',
  });
  const put = await fetch(String(file.uploadUrl), {
    method: 'PUT',
    headers: { 'Content-Type': 'text/plain' },
    body: 'Matrix notes.',
  });
  if (put.status !== 200) throw new Error(`upload failed: ${put.status}`);
  // No worker ingests it here: the file is marked READY as ingestion would, so reads of a finished file apply.
  const fileId = idOf(file, 'fileId');
  await env.deps.repos.tenant(o.org.organizationId).kbFiles.setForGeneration(fileId, 1, {
    status: 'READY',
    uploadedAt: new Date(),
  });
  const etl = await call(env, token, 'post', `${base}/etls`, {
    etlType: 'workflow',
    workflowId: o.fileChainWorkflowId,
    conditions: [],
  });
  return { knowledgeBaseId, fileId, etlId: idOf(etl, 'etlId') };
}

async function artifact(env: TestEnv, o: MatrixOrg, creator: Identity, variant: string): Promise<Scene> {
  const token = o.members[creator].token;
  const created = await call(env, token, 'post', o.org.path('/artifacts'), {
    name: 'Matrix app',
    contentType: 'text/html',
    content: appHtml({ workflows: [], tables: [] }),
  });
  const artifactId = idOf(created.artifact as Record<string, unknown>, 'artifactId');
  // Pinned: an app opens only from a pinned artifact.
  await call(env, token, 'put', o.org.path(`/artifacts/${artifactId}/pin`));
  // variant `shared-<identity>`: shared with that member.
  const sharedWith = variant.startsWith('shared-') ? (variant.slice(7) as Identity) : null;
  if (sharedWith) {
    await call(env, token, 'put', o.org.path(`/artifacts/${artifactId}/share`), {
      userIds: [o.members[sharedWith].userId],
    });
  }
  return { artifactId, tableName: 'none', workflowId: 'none' };
}

/** An agent of group `variant` (A or B) with one of each attachment. */
async function agent(env: TestEnv, o: MatrixOrg, _creator: Identity, variant: string, fresh: boolean) {
  const token = o.members.owner.token;
  const agentId = await agentOf(env, o, variant === 'B' ? 'B' : 'A', fresh);
  const base = o.org.path(`/agents/${agentId}`);
  await call(env, token, 'post', `${base}/tools`, { toolCode: 'current_time', configuration: {} });
  await call(env, token, 'post', `${base}/agent-attachments`, {
    targetAgentId: o.agents.spare,
    instructions: 'x',
  });
  const kb = (await scene(env, o, 'kb', 'admin', 'organization')).knowledgeBaseId ?? '';
  await call(env, token, 'post', `${base}/knowledgebases`, { knowledgeBaseId: kb });
  const chain = (await scene(env, o, 'chain', 'admin', 'org')).actionChainId ?? '';
  await call(env, token, 'post', `${base}/chains`, { actionChainId: chain });
  return {
    agentId,
    toolCode: 'current_time',
    targetAgentId: o.agents.spare,
    knowledgeBaseId: kb,
    actionChainId: chain,
  };
}

async function chain(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const token = o.members.admin.token;
  const created = await call(env, token, 'post', o.org.path('/chains'), {
    name: 'Matrix chain',
    description: 'matrix',
    llmInstructions: 'Be brief.',
    steps: [{ stepOrder: 1, name: 'first', instructions: 'Say hello.' }],
  });
  const actionChainId = idOf(created, 'actionChainId');
  const base = o.org.path(`/chains/${actionChainId}`);
  const steps = await call(env, token, 'get', `${base}/steps`);
  const stepId = idOf((steps as unknown as Array<Record<string, unknown>>)[0] ?? {}, 'stepId');
  const run = await call(env, token, 'post', `${base}/run`, {}, 202);
  const kb = await call(env, token, 'post', o.org.path('/knowledgebases'), {
    title: 'Chain KB',
    llmDescription: 'matrix',
    type: 'ORGANIZATION',
  });
  const knowledgeBaseId = idOf(kb, 'knowledgeBaseId');
  const step = `${base}/steps/${stepId}`;
  await call(env, token, 'post', `${step}/agents`, { agentId: o.agents.spare });
  await call(env, token, 'post', `${step}/knowledge-bases`, { knowledgeBaseId });
  await call(env, token, 'post', `${step}/tools`, { toolCode: 'current_time', config: {} });
  return {
    actionChainId,
    stepId,
    runId: idOf(run, 'runId'),
    agentId: o.agents.spare,
    knowledgeBaseId,
    toolCode: 'current_time',
  };
}

async function table(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const token = o.members.admin.token;
  const tableName = `matrix_${newId('t')
    .slice(2)
    .replace(/[^A-Za-z0-9]/g, '')}`;
  const field = (name: string) => ({ name, type: 'text', required: false, comments: name });
  await call(env, token, 'post', o.org.path('/tables'), {
    name: tableName,
    fields: [field('title'), field('note')],
  });
  const row = await call(env, token, 'post', o.org.path(`/tables/${tableName}/data`), {
    data: { title: 'a' },
  });
  return { tableName, id: idOf(row, 'id'), columnName: 'note' };
}

async function schedule(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const token = o.members.admin.token;
  const body = { name: 'Hourly', cronExpression: '0 * * * *' };
  const triggerId = idOf(await call(env, token, 'post', o.org.path('/schedules'), body), 'triggerId');
  const handler = await call(env, token, 'post', o.org.path(`/schedules/${triggerId}/handlers`), {
    handlerType: 'action-chain',
    actionChainId: o.spareChain,
    instructions: 'Run it.',
  });
  return { triggerId, handlerId: idOf(handler, 'handlerId') };
}

async function webhook(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const token = o.members.admin.token;
  const body = { name: 'Hook', description: 'matrix' };
  const webhookId = idOf(await call(env, token, 'post', o.org.path('/webhooks'), body), 'webhookId');
  const base = o.org.path(`/webhooks/${webhookId}`);
  const handler = await call(env, token, 'post', `${base}/handlers`, {
    handlerType: 'action-chain',
    actionChainId: o.spareChain,
    instructions: 'Run it.',
    inputMapping: {},
  });
  // A delivery's workflow records it; no worker runs here, so the record is written as that workflow would.
  const deliveryId = newId('whd');
  await env.deps.repos.tenant(o.org.organizationId).webhooks.recordDelivery(deliveryId, {
    webhookId,
    eventId: null,
    receivedAt: new Date(),
    requestJson: JSON.stringify({ body: { hello: 'world' } }),
  });
  return { webhookId, handlerId: idOf(handler, 'handlerId'), deliveryId };
}

async function group(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const token = o.members.owner.token;
  const body = { name: `Group ${newId('g')}`, description: 'matrix' };
  const userGroupId = idOf(await call(env, token, 'post', o.org.path('/groups'), body), 'userGroupId');
  await call(env, token, 'post', o.org.path(`/groups/${userGroupId}/agents`), { agentId: o.agents.spare });
  return { userGroupId, agentId: o.agents.spare };
}

async function apiKey(env: TestEnv, o: MatrixOrg): Promise<Scene> {
  const body = { description: 'bystander', permissions: {} };
  const created = await call(env, o.members.owner.token, 'post', o.org.path('/api-keys'), body);
  return { apiKeyId: idOf(created, 'apiKeyId') };
}

async function user(env: TestEnv, o: MatrixOrg, _creator: Identity, variant: string): Promise<Scene> {
  const role = variant === 'otherOwner' ? 'owner' : 'chat';
  return { userId: (await addMember(env, o.org.organizationId, role, 'Bystander')).userId };
}

const noScene: Maker = () => Promise.resolve({});
const MAKERS: Record<Kind, Maker> = {
  none: noScene,
  org: noScene,
  user,
  group,
  apiKey,
  table,
  agent,
  conversation,
  kb: knowledgeBase,
  chain,
  artifact,
  schedule,
  webhook,
};

/** A scene of `kind` made in `o` by `creator`; made once per (kind, creator, variant) unless `fresh`. */
export function scene(
  env: TestEnv,
  o: MatrixOrg,
  kind: Kind,
  creator: Identity,
  variant: string,
  fresh = false,
): Promise<Scene> {
  const maker = MAKERS[kind];
  if (fresh) return maker(env, o, creator, variant, true);
  const key = `${kind}:${creator}:${variant}`;
  let made = o.made.get(key);
  if (!made) {
    made = maker(env, o, creator, variant, false);
    o.made.set(key, made);
  }
  return made;
}
