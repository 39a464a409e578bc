import type { BrowseAction } from '@contracts';
import type { SessionOwner } from '@lib/browser-sessions/browser-session.schema';
import { badRequest } from '@lib/errors';
import { ALLOWED_HOSTS_SCHEMA, type ToolSpec } from '../tool-spec';

export interface BrowseConfig {
  allowedHosts: string[];
}

const MAX_SELECTOR = 500;
const MAX_FILL = 10_000;

/** The action the model asked for, or a 400 saying what is wrong with it (the model hears it). */
function parseAction(args: Record<string, unknown>): BrowseAction {
  const str = (name: string, max: number, required = true) => {
    const v = args[name];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'string' || (required && !v) || v.length > max)
      throw badRequest(`${name} must be a non-empty string of at most ${max} characters`);
    return v;
  };
  switch (args.action) {
    case 'navigate':
      return { action: 'navigate', url: str('url', 4000)! };
    case 'read_text':
      return { action: 'read_text', selector: str('selector', MAX_SELECTOR, false) };
    case 'click':
      return { action: 'click', selector: str('selector', MAX_SELECTOR)! };
    case 'fill': {
      const text = args.text;
      if (typeof text !== 'string' || text.length > MAX_FILL)
        throw badRequest(`text must be a string of at most ${MAX_FILL} characters`);
      return { action: 'fill', selector: str('selector', MAX_SELECTOR)!, text };
    }
    case 'screenshot':
      return { action: 'screenshot' };
    default:
      throw badRequest('action must be one of navigate, read_text, click, fill, screenshot');
  }
}

export const browseTool: ToolSpec<BrowseConfig> = {
  toolCode: 'browse',
  name: 'Web browser',
  description:
    'Lets the agent (or a chain step) drive a real headless Chromium: navigate, read text, click, fill and ' +
    'take screenshots (stored with the session). The browser belongs to the conversation (a browser task, ' +
    '`isBrowserTask`) or the chain run that uses it; the first call opens a session when none is active. ' +
    'Navigation (typed, clicked, redirected, in frames) is limited to the allowed hosts: a DNS name or ' +
    '`*.example.com` (any subdomain). Every request of the page, subresources included, goes through the ' +
    'outbound address guard: private, loopback, link-local and other non-public addresses are refused.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['allowedHosts'],
    properties: {
      allowedHosts: ALLOWED_HOSTS_SCHEMA,
    },
  },
  model: {
    description:
      'Use a web browser: navigate to a URL on an allowed host, read the text of the page (or of a CSS ' +
      'selector), click an element, fill an input, or take a screenshot. Answers with the page URL and title ' +
      'and, for read_text, the text.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['navigate', 'read_text', 'click', 'fill', 'screenshot'] },
        url: { type: 'string', description: 'navigate: absolute http(s) URL' },
        selector: {
          type: 'string',
          description: 'click, fill (required) and read_text (optional): CSS selector',
        },
        text: { type: 'string', description: 'fill: the text to type' },
        sessionId: { type: 'string', description: 'A session of this task; default: its active session' },
      },
      required: ['action'],
    },
  },
  async run(ctx, args, { browserSessions }) {
    const request = parseAction(args);
    let owner: SessionOwner;
    if (ctx.chainRun) owner = { type: 'chain_run', ...ctx.chainRun };
    else if (ctx.conversation)
      owner = { type: 'conversation', conversationId: ctx.conversation.conversationId };
    else throw badRequest('the browser is available in conversations and chain runs only');
    const sessionId = typeof args.sessionId === 'string' && args.sessionId ? args.sessionId : undefined;
    const session = await browserSessions.forTool(
      ctx.organizationId,
      owner,
      `${ctx.organizationId}:${ctx.requestId}:${ctx.toolCallId}`,
      sessionId,
    );
    if (session.status !== 'active')
      return { sessionId: session._id, ok: false, error: `the browser session is ${session.status}` };
    const result = await browserSessions.act(ctx.organizationId, session._id, {
      request,
      allowedHosts: ctx.config.allowedHosts,
    });
    return { sessionId: session._id, ...result };
  },
};
