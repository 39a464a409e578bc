import { readFileSync } from 'node:fs';
import { openApiSpecPath } from '@lib/spec';
import { parse } from 'yaml';
import type { Identity } from '../fixtures/authorization-oracle';
import { appHtml } from './artifacts';
import { scene, type Scene } from './authz-scenes';
import type { MatrixOrg, MatrixWorld } from './authz-world';

export interface Operation {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** The first 2xx status openapi.yaml documents. */
  success: number;
}

interface OpenapiDocument {
  paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>>;
  components: { schemas: { PermissionMap: { properties: Record<string, unknown> } } };
}
const openapi = () => parse(readFileSync(openApiSpecPath(), 'utf8')) as OpenapiDocument;

/** The scopes of an API key's permission map. */
export function permissionScopesOfOpenapi(): string[] {
  return Object.keys(openapi().components.schemas.PermissionMap.properties);
}

/** Every operation of openapi.yaml, in document order. */
export function operationsOfOpenapi(): Operation[] {
  const doc = openapi();
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op?.operationId) continue;
      const success = Object.keys(op.responses ?? {}).find((code) => code.startsWith('2'));
      ops.push({
        operationId: op.operationId,
        method: method as Operation['method'],
        path,
        success: Number(success),
      });
    }
  }
  return ops;
}

/**
 * Operations that use their target up when they succeed (deletes, attaches, renames of a column, role changes,
 * a reindex that sends a file back to processing, an unpin that stops the app opening): an allowed row gets a
 * target of its own.
 */
export const CONSUMES = new Set([
  'updateUser',
  'deleteUser',
  'deleteGroup',
  'addGroupAgent',
  'removeGroupAgent',
  'deleteApiKey',
  'deleteTable',
  'deleteTableRow',
  'renameTableColumn',
  'linkTableColumn',
  'deleteConversation',
  'deleteAnalysis',
  'deleteAgent',
  'attachAgentTool',
  'detachAgentTool',
  'attachAgent',
  'detachAgent',
  'attachAgentKnowledgeBase',
  'detachAgentKnowledgeBase',
  'attachAgentChain',
  'detachAgentChain',
  'deleteKnowledgeBase',
  'deleteKnowledgeBaseFile',
  'reindexKnowledgeBaseFile',
  'deleteEtlRule',
  'deleteChain',
  'deleteChainStep',
  'attachChainStepAgent',
  'detachChainStepAgent',
  'attachChainStepKnowledgeBase',
  'detachChainStepKnowledgeBase',
  'attachChainStepTool',
  'detachChainStepTool',
  'unpinArtifact',
  'deleteSchedule',
  'deleteScheduleHandler',
  'deleteWebhook',
  'deleteWebhookHandler',
]);

export interface BodyContext {
  world: MatrixWorld;
  /** The organization the scene belongs to. */
  o: MatrixOrg;
  identity: Identity;
}

/** Marks the matrix's chain-generation prompts, which the scripted model answers. */
export const MATRIX_PROMPT_TAG = 'authorization-matrix-step';
let counter = 0;
const unique = (prefix: string) => `${prefix}_${process.pid}_${++counter}`;
const HTTP_TOOL = { allowedHosts: ['api.example.com'], methods: ['GET'] };
const ETL = (c: BodyContext) => ({
  etlType: 'workflow',
  workflowId: c.o.fileChainWorkflowId,
  conditions: [],
});
const AGENT = () => ({
  name: unique('Agent'),
  description: 'd',
  instructions: 'Be brief.',
  model: 'matrix-model',
});
const CHAIN = () => ({ name: unique('Chain'), description: 'd', llmInstructions: 'Be brief.' });
const SCHEDULE_HANDLER = (c: BodyContext) => ({
  handlerType: 'action-chain',
  actionChainId: c.o.spareChain,
  instructions: 'Run it.',
});

type Body = (s: Scene, c: BodyContext) => object | Promise<object>;

/** A valid body for each operation that takes one: a row's status must come from who asks, not from what. */
export const BODIES: Record<string, Body> = {
  updateOrganization: () => ({ tradingName: 'Matrix Trading' }),
  createUser: () => ({ email: `${unique('new')}@example.test`, name: 'New Member', role: 'chat' }),
  updateUser: () => ({ role: 'chat' }),
  createGroup: () => ({ name: unique('Group'), description: 'd' }),
  updateGroup: () => ({ name: 'Renamed group', description: 'd', isDefault: false, fullAccess: false }),
  addUserToGroup: async (_s, c) => ({
    userId: (await scene(c.world.env, c.o, 'user', 'owner', 'member')).userId,
  }),
  addGroupAgent: (_s, c) => ({ agentId: c.o.agents.spare2 }),
  createApiKey: () => ({ description: 'new key', permissions: {} }),
  updateApiKey: () => ({ description: 'changed' }),
  assumeRole: (_s, c) => ({ userId: c.o.members.chat.userId }),
  verifyAssumeRole: (_s, c) => ({ token: c.world.sampleToken }),
  createTable: () => ({
    name: unique('tbl'),
    fields: [{ name: 'title', type: 'text', required: false, comments: 'title' }],
  }),
  insertTableRow: () => ({ data: { title: 'b' } }),
  insertTableRows: () => ({ data: [{ title: 'c' }] }),
  updateTableRow: () => ({ data: { title: 'd' } }),
  renameTableColumn: () => ({ newName: 'remark' }),
  linkTableColumn: () => ({ ddFieldName: 'note' }),
  createConversation: (s) => ({ agentId: s.agentId, title: 'New conversation' }),
  renameConversation: () => ({ title: 'Renamed' }),
  createAnalysis: () => ({ title: 'Another question' }),
  updateAnalysis: () => ({ description: unique('more') }),
  createAgent: AGENT,
  updateAgent: AGENT,
  setAgentVisibility: () => ({ visibility: 'private' }),
  attachAgentTool: () => ({ toolCode: 'http_request', configuration: HTTP_TOOL }),
  updateAgentTool: () => ({ configuration: {} }),
  attachAgent: (_s, c) => ({ targetAgentId: c.o.agents.spare2, instructions: 'x' }),
  updateAgentAttachment: () => ({ instructions: 'y' }),
  attachAgentKnowledgeBase: (_s, c) => ({ knowledgeBaseId: c.o.spareKb }),
  attachAgentChain: (_s, c) => ({ actionChainId: c.o.spareChain }),
  createKnowledgeBase: () => ({ title: unique('KB'), llmDescription: 'm', type: 'PERSONAL' }),
  updateKnowledgeBase: () => ({ title: 'Renamed KB', llmDescription: 'm' }),
  copyKnowledgeBaseToOrganization: (_s, c) => ({ toOrganizationId: c.o.org.organizationId }),
  createKnowledgeBaseFileUploadUrl: () => ({ fileName: 'more.txt', contentType: 'text/plain' }),
  copyKnowledgeBaseFile: (s) => ({ destinationKnowledgeBaseId: s.knowledgeBaseId }),
  createEtlRule: (_s, c) => ETL(c),
  updateEtlRule: (_s, c) => ETL(c),
  createChain: CHAIN,
  generateChainStepFromPrompt: () => ({ prompt: `Summarise the ticket (${MATRIX_PROMPT_TAG})` }),
  updateChain: () => ({ ...CHAIN(), inputType: 'json' }),
  runChain: () => ({}),
  createChainStep: () => ({ stepOrder: 2, name: 'second', instructions: 'Then stop.' }),
  updateChainStep: () => ({ stepOrder: 1, name: 'first', instructions: 'Say hi.' }),
  attachChainStepAgent: (_s, c) => ({ agentId: c.o.agents.spare2 }),
  attachChainStepKnowledgeBase: (_s, c) => ({ knowledgeBaseId: c.o.spareKb }),
  attachChainStepTool: () => ({ toolCode: 'http_request', config: HTTP_TOOL }),
  updateChainStepTool: () => ({ config: {} }),
  createArtifact: () => ({ name: 'New artifact', contentType: 'text/html', content: '<p>new</p>' }),
  reorderArtifactPins: () => ({ orderedArtifactIds: [] }),
  renameArtifact: () => ({ name: 'Renamed artifact' }),
  publishArtifactVersion: () => ({
    contentType: 'text/html',
    content: appHtml({ workflows: [], tables: [] }),
  }),
  // The same sharing again: a row must not take the share away from the rows after it.
  shareArtifact: (_s, c) => ({ userIds: [c.o.members[c.identity].userId] }),
  promoteArtifact: () => ({}),
  createArtifactDownloadLink: () => ({}),
  sendArtifactToKnowledgeBase: async (_s, c) => ({
    knowledgeBaseId: (await scene(c.world.env, c.o, 'kb', c.identity, 'private')).knowledgeBaseId,
  }),
  approveAppManifest: () => ({}),
  insertAppTableRows: () => ({ rows: [{}] }),
  runAppWorkflow: () => ({}),
  createSchedule: () => ({ name: unique('Schedule'), cronExpression: '0 * * * *' }),
  updateSchedule: () => ({ name: 'Renamed schedule', cronExpression: '0 * * * *' }),
  createScheduleHandler: (_s, c) => SCHEDULE_HANDLER(c),
  updateScheduleHandler: (_s, c) => SCHEDULE_HANDLER(c),
  createWebhook: () => ({ name: unique('Hook'), description: 'd' }),
  updateWebhook: () => ({ name: 'Renamed hook', description: 'd' }),
  executeWebhook: () => ({ hello: 'again' }),
  createWebhookHandler: (_s, c) => ({ ...SCHEDULE_HANDLER(c), inputMapping: {} }),
  updateWebhookHandler: () => ({ instructions: 'Run it again.', inputMapping: {} }),
};

/** Required query parameters. */
export const QUERIES: Record<string, string> = {
  searchKnowledgeBase: '?q=notes',
  searchAllKnowledgeBases: '?q=notes',
};

/** The path of `op` in organization `organizationId` with the scene's ids. */
export function pathOf(op: Operation, organizationId: string, s: Scene): string {
  const filled = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    if (name === 'organizationId') return organizationId;
    const value = s[name];
    if (value === undefined) throw new Error(`${op.operationId}: the scene has no ${name}`);
    return encodeURIComponent(value);
  });
  return filled + (QUERIES[op.operationId] ?? '');
}
