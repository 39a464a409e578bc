import { badRequest } from '@lib/errors';
import { MANIFEST_FILE } from '@lib/artifacts/app-manifest';
import type { ArtifactToolCall } from '@lib/artifacts/tool-artifacts.service';
import type { ToolRunContext, ToolSpec } from '../tool-spec';

type NoConfig = Record<string, unknown>;

const APP_HINT =
  `For an app, write one self-contained HTML page (inline scripts and styles only; nothing is loaded from ` +
  `elsewhere). It may use tables and workflows through window.service (tables.query(name, {filters, orderBy, ` +
  `limit, offset}), tables.insert(name, rows), workflows.run(workflowId, input)) once an admin approves what ` +
  `it declares in <script type="text/plain" data-file="${MANIFEST_FILE}">export default {"workflows": [], ` +
  `"tables": [{"table": "name", "access": "read"}]}</script> (the object written as JSON; access read or write).`;

/** Where the call writes: the turn's conversation or the step's chain run (not a call from another agent). */
function ownerOf(ctx: ToolRunContext<NoConfig>): ArtifactToolCall {
  const call = {
    organizationId: ctx.organizationId,
    agentId: ctx.agentId,
    requestId: ctx.requestId,
    toolCallId: ctx.toolCallId,
  };
  if (ctx.conversation)
    return { ...call, conversationId: ctx.conversation.conversationId, userId: ctx.conversation.userId };
  if (ctx.chainRun) {
    const { actionChainId, runId, userId } = ctx.chainRun;
    return { ...call, chainRun: { actionChainId, runId }, userId };
  }
  throw badRequest(
    'artifacts can only be written in a conversation or a chain step (not when called by another agent)',
  );
}

const text = (args: Record<string, unknown>, key: string, required: boolean): string | undefined => {
  const value = args[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string') throw badRequest(`${key} must be a string`);
  return value;
};

export const createArtifactTool: ToolSpec<NoConfig> = {
  toolCode: 'create_artifact',
  name: 'Create an artifact',
  description:
    'Lets the agent (or a chain step) write a file (a document, data or an HTML app) into the conversation ' +
    '(or the chain run) as a versioned artifact the user can download, pin as an app, promote to the library ' +
    'or send to a knowledge base.',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  model: {
    description: `Create a new artifact (in this conversation or chain run) and return its artifactId. ${APP_HINT}`,
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Display name, 1 to 500 characters' },
        contentType: {
          type: 'string',
          description: 'MIME type, e.g. text/html for an app, text/markdown for a document',
        },
        content: { type: 'string', description: 'The whole content, as text' },
      },
      required: ['name', 'contentType', 'content'],
    },
  },
  // async: a refusal (not in a conversation, an argument of the wrong type) rejects like the service's own
  run: async (ctx, args, deps) =>
    await deps.artifacts.create(ownerOf(ctx), {
      name: text(args, 'name', true)!,
      contentType: text(args, 'contentType', true)!,
      content: text(args, 'content', true)!,
    }),
};

export const updateArtifactTool: ToolSpec<NoConfig> = {
  toolCode: 'update_artifact',
  name: 'Update an artifact',
  description:
    'Lets the agent publish a new version of an artifact written in the same conversation or chain run ' +
    '(earlier versions are kept; a new version of an app needs a new approval).',
  configSchema: { type: 'object', additionalProperties: false, properties: {} },
  model: {
    description: `Publish a new version of an artifact of this conversation or chain run, replacing its whole content. ${APP_HINT}`,
    parameters: {
      type: 'object',
      properties: {
        artifactId: { type: 'string' },
        content: { type: 'string', description: 'The whole new content, as text' },
        contentType: { type: 'string', description: 'Only when it changes' },
        name: { type: 'string', description: 'Only to rename it' },
      },
      required: ['artifactId', 'content'],
    },
  },
  run: async (ctx, args, deps) =>
    await deps.artifacts.update(ownerOf(ctx), {
      artifactId: text(args, 'artifactId', true)!,
      content: text(args, 'content', true)!,
      contentType: text(args, 'contentType', false),
      name: text(args, 'name', false),
    }),
};
