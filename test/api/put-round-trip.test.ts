import { expect } from 'chai';
import { appHtml, uploadArtifact } from '@test/helpers/artifacts';
import { createTestAgent } from '@test/helpers/agents';
import { testEnv, type TestEnv } from '@test/helpers/env';
import { createKb } from '@test/helpers/kb';
import { as, createTestOrg, type TestOrg } from '@test/helpers/org';
import { forgeReadOnly, putBodies, readOnlyPart, type Schema } from '@test/helpers/read-only';

type Json = Record<string, unknown>;
interface Ctx {
  env: TestEnv;
  org: TestOrg;
  post: (suffix: string, body: object) => Promise<Json>;
}

/** One PUT: how to make the resource (its path, read with GET and written with PUT), and the field to change. */
interface RoundTrip {
  make: (c: Ctx) => string | Promise<string>;
  /** The field the GET nests the resource under, if any. */
  unwrap?: string;
  /** A resource read as an item of its collection (the GET of the path without its last segment): which one. */
  listed?: [field: string, value: string];
  change?: [field: string, value: unknown];
  /** Read-only fields the write itself moves, by dotted path (besides `updatedAt`, which every write moves). */
  moving?: string[];
  /** What the write did, for a PUT whose body is a request rather than a field. */
  stored?: (after: Json) => void;
}
/** A PUT with no GET of the same resource to take its body from: why. */
type Unread = { unread: string };

const STEP = { stepOrder: 1, name: 'first', instructions: 'Say hi.' };
const text = { type: 'string' };
const FILE_STEP = {
  ...STEP,
  inputSchema: { type: 'object', properties: { fileId: text, knowledgeBaseId: text, fileName: text } },
};
const HTTP_TOOL = { allowedHosts: ['api.example.com'], methods: ['GET'] };
const id = (body: Json, field: string) => String(body[field]);

async function chain(c: Ctx, extra: object = {}) {
  const body = { name: 'Chain', description: 'd', llmInstructions: 'Be brief.', steps: [STEP], ...extra };
  const created = await c.post('/chains', body);
  return { chainId: id(created, 'actionChainId'), workflowId: id(created, 'workflowId'), created };
}
async function schedule(c: Ctx) {
  return id(await c.post('/schedules', { name: 'Nightly', cronExpression: '0 0 1 1 *' }), 'triggerId');
}
async function conversation(c: Ctx) {
  const { agentId } = await createTestAgent(c.env, c.org.organizationId);
  return id(await c.post('/conversations', { agentId }), 'conversationId');
}

const ROUND_TRIPS: Record<string, RoundTrip | Unread> = {
  updateOrganization: { make: () => '', change: ['tradingName', 'Round Trip Trading'] },
  updateUser: { make: (c) => `/users/${c.org.chat.userId}`, change: ['role', 'admin'] },
  updateGroup: {
    make: async (c) =>
      `/groups/${id(await c.post('/groups', { name: 'G', description: 'd' }), 'userGroupId')}`,
    change: ['description', 'changed'],
  },
  updateApiKey: {
    make: async (c) =>
      `/api-keys/${id(await c.post('/api-keys', { description: 'k', permissions: {} }), 'apiKeyId')}`,
    change: ['description', 'changed'],
  },
  renameConversation: {
    make: async (c) => `/conversations/${await conversation(c)}`,
    change: ['title', 'Renamed'],
  },
  updateAnalysis: {
    make: async (c) => {
      const conversationId = await conversation(c);
      const analysis = await c.post(`/conversations/${conversationId}/analysis`, {
        title: 'Q',
        description: 'D',
      });
      return `/conversations/${conversationId}/analysis/${id(analysis, 'analysisId')}`;
    },
    change: ['title', 'Another question'],
    // A new question is a new run of the analysis: its run state starts again.
    moving: [
      'run',
      'status',
      'startedAt',
      'completedAt',
      'result',
      'error',
      'artifactId',
      'artifactVersionId',
    ],
  },
  updateAgent: {
    make: async (c) => `/agents/${(await createTestAgent(c.env, c.org.organizationId)).agentId}`,
    change: ['description', 'changed'],
  },
  updateKnowledgeBase: {
    make: async (c) => `/knowledgebases/${await createKb(c.env, c.org)}`,
    change: ['llmDescription', 'changed'],
  },
  updateEtlRule: {
    make: async (c) => {
      const kb = await createKb(c.env, c.org);
      const { workflowId } = await chain(c, { inputType: 'file', steps: [FILE_STEP] });
      const rule = await c.post(`/knowledgebases/${kb}/etls`, {
        etlType: 'workflow',
        workflowId,
        conditions: [],
      });
      return `/knowledgebases/${kb}/etls/${id(rule, 'etlId')}`;
    },
    change: ['conditions', [{ field: 'fileName', comparison: 'ENDS_WITH', value: '.pdf' }]],
  },
  updateChain: {
    make: async (c) => `/chains/${(await chain(c)).chainId}`,
    change: ['description', 'changed'],
    // `steps` sent replaces every step (the spec's "fully replaces existing steps"): the new steps are new.
    moving: ['steps.stepId', 'steps.createdAt', 'steps.updatedAt'],
  },
  updateChainStep: {
    make: async (c) => {
      const { chainId, created } = await chain(c);
      return `/chains/${chainId}/steps/${id((created.steps as Json[])[0]!, 'stepId')}`;
    },
    change: ['name', 'renamed'],
  },
  updateChainStepTool: {
    make: async (c) => {
      const { chainId, created } = await chain(c);
      const step = `/chains/${chainId}/steps/${id((created.steps as Json[])[0]!, 'stepId')}`;
      await c.post(`${step}/tools`, { toolCode: 'http_request', config: HTTP_TOOL });
      return `${step}/tools/http_request`;
    },
    change: ['config', { ...HTTP_TOOL, allowedHosts: ['other.example.com'] }],
  },
  renameArtifact: {
    make: async (c) => `/artifacts/${(await uploadArtifact(c.env, c.org, c.org.owner.token)).artifactId}`,
    unwrap: 'artifact',
    change: ['name', 'Renamed report'],
  },
  approveAppManifest: {
    make: async (c) => {
      const content = appHtml({ workflows: [], tables: [] });
      const artifact = await uploadArtifact(c.env, c.org, c.org.owner.token, { content });
      return `/artifacts/${artifact.artifactId}/app-manifest`;
    },
    moving: ['approved'],
    stored: (after) => expect(after.approved, 'the version read is approved').to.not.equal(null),
  },
  updateSchedule: {
    make: async (c) => `/schedules/${await schedule(c)}`,
    change: ['description', 'changed'],
  },
  updateScheduleHandler: {
    make: async (c) => {
      const triggerId = await schedule(c);
      const { chainId } = await chain(c);
      const handler = { handlerType: 'action-chain', actionChainId: chainId, instructions: 'Run it.' };
      return `/schedules/${triggerId}/handlers/${id(await c.post(`/schedules/${triggerId}/handlers`, handler), 'handlerId')}`;
    },
    change: ['instructions', 'Run it again.'],
  },
  updateWebhook: {
    make: async (c) => `/webhooks/${id(await c.post('/webhooks', { name: 'Hook' }), 'webhookId')}`,
    change: ['description', 'changed'],
  },
  updateWebhookHandler: {
    make: async (c) => {
      const webhookId = id(await c.post('/webhooks', { name: 'Hook' }), 'webhookId');
      const { chainId } = await chain(c);
      const handler = { handlerType: 'action-chain', actionChainId: chainId, instructions: 'Run it.' };
      return `/webhooks/${webhookId}/handlers/${id(await c.post(`/webhooks/${webhookId}/handlers`, handler), 'handlerId')}`;
    },
    change: ['instructions', 'Run it again.'],
  },
  updateTableRow: { unread: 'a row is read in the table data list, not at its own path' },
  renameTableColumn: { unread: 'a rename request ({ newName }), not a representation of the column' },
  setAgentVisibility: { unread: 'the agent GET carries visibility; this sub-resource has no GET' },
  updateAgentTool: {
    make: async (c) => {
      const { agentId } = await createTestAgent(c.env, c.org.organizationId);
      await c.post(`/agents/${agentId}/tools`, { toolCode: 'http_request', configuration: HTTP_TOOL });
      return `/agents/${agentId}/tools/http_request`;
    },
    listed: ['toolCode', 'http_request'],
    change: ['configuration', { ...HTTP_TOOL, allowedHosts: ['other.example.com'] }],
  },
  updateAgentAttachment: {
    make: async (c) => {
      const { agentId } = await createTestAgent(c.env, c.org.organizationId);
      const target = await createTestAgent(c.env, c.org.organizationId, { name: 'Maths' });
      await c.post(`/agents/${agentId}/agent-attachments`, {
        targetAgentId: target.agentId,
        instructions: 'x',
      });
      return `/agents/${agentId}/agent-attachments/${target.agentId}`;
    },
    listed: ['targetAgentName', 'Maths'],
    change: ['instructions', 'Ask it about maths.'],
  },
  reindexKnowledgeBaseFile: { unread: 'an action without a body' },
  pinArtifact: { unread: 'an action without a body' },
  shareArtifact: { unread: 'a sharing request (userIds, groupIds), not a representation of the artifact' },
};

describe('PUT accepts back the full object a GET returned (read-only fields are ignored)', () => {
  let ctx: Ctx;
  beforeEach(async () => {
    const env = await testEnv();
    const org = await createTestOrg(env, 'Round Trip Org');
    const post = async (suffix: string, body: object) => {
      const res = await as(env, org.owner.token).post(org.path(suffix), body);
      expect(res.status, `POST ${suffix}: ${JSON.stringify(res.body)}`).to.equal(201);
      return res.body as Json;
    };
    ctx = { env, org, post };
  });

  it('every PUT in openapi.yaml has a row here', () => {
    expect(Object.keys(ROUND_TRIPS).sort()).to.deep.equal([...putBodies().keys()].sort());
  });

  for (const [operationId, row] of Object.entries(ROUND_TRIPS)) {
    if ('unread' in row) continue;
    it(`${operationId}: the body as read, one field changed and read-only fields forged, is stored as changed`, async () => {
      const schema = putBodies().get(operationId) as Schema;
      const path = ctx.org.path(await row.make(ctx));
      const client = as(ctx.env, ctx.org.owner.token);
      const read = async () => {
        const res = await client.get(row.listed ? path.slice(0, path.lastIndexOf('/')) : path);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        if (!row.listed) return (row.unwrap ? res.body[row.unwrap] : res.body) as Json;
        const [field, value] = row.listed;
        return (res.body as Json[]).find((item) => item[field] === value)!;
      };
      const before = await read();
      const sent = forgeReadOnly(schema, before) as Json;
      if (row.change) sent[row.change[0]] = row.change[1];
      const res = await client.put(path, sent);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const after = await read();
      if (row.change) expect(after[row.change[0]]).to.deep.equal(row.change[1]);
      row.stored?.(after);
      const moving = new Set(['updatedAt', ...(row.moving ?? [])]);
      expect(readOnlyPart(schema, after, moving), 'read-only fields').to.deep.equal(
        readOnlyPart(schema, before, moving),
      );
      if ('updatedAt' in after) expect(after.updatedAt).to.not.equal('2001-02-03T04:05:06.000Z');
    });
  }
});
