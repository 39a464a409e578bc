import { randomUUID } from 'node:crypto';
import {
  WORKFLOWS,
  frontendToolResultSignal,
  workflowIds,
  type ModelTool,
  type TurnInput,
  type TurnSetup,
  type TurnWorkflow,
} from '@contracts';
import type { Admission } from '@lib/admission/admission';
import type { AgentAccess } from '@lib/agents/agent-access';
import type { RequestContext } from '@lib/auth/context';
import { badRequest, conflict, invalidReference, notFound, referenced } from '@lib/errors';
import { BlockedAddressError, type OutboundClient } from '@lib/http/outbound';
import { page, type PageRequest } from '@lib/paging';
import type { Tenants } from '@lib/db/tenants';
import { startIdempotent, type TemporalDeps } from '@lib/temporal/client';
import type { ConversationDoc } from './conversation.schema';
import { toConversationView, toMessageView, type ConversationsRepository } from './conversations.repository';
import type { AgentLookup, ModelToolSource } from './ports';
import type { ConversationsStore } from './store';
import { agentSettings, MAX_INPUT_SETUP_BYTES, turnSetupOf } from './turn-setup';

export interface ConversationCreateBody {
  agentId: string;
  conversationId?: string;
  title?: string;
  message?: string;
  assistantMessage?: string;
  frontendTools?: TurnInput['frontendTools'];
  requestId?: string;
  callbackUrl?: string;
  isBrowserTask?: boolean;
}

const TITLE_LENGTH = 60;

/** A title from the first words of the message, cut at a word boundary. */
export function titleFrom(message: string | undefined): string {
  const text = (message ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return 'New conversation';
  if (text.length <= TITLE_LENGTH) return text;
  const cut = text.slice(0, TITLE_LENGTH);
  return `${cut.slice(0, cut.lastIndexOf(' ') > 20 ? cut.lastIndexOf(' ') : TITLE_LENGTH)}…`;
}

/** The setup of a turn that opens a conversation (its history: the pre-filled reply and the message), or
 * undefined when it is too big to hand over (the workflow reads it instead). */
function handedOverSetup(parts: {
  agent: ReturnType<typeof agentSettings>;
  tools: ModelTool[];
  ctx: RequestContext;
  conversationId: string;
  body: ConversationCreateBody;
}): TurnSetup | undefined {
  const { body } = parts;
  const history = [
    ...(body.assistantMessage ? [{ role: 'assistant' as const, text: body.assistantMessage }] : []),
    { role: 'user' as const, text: body.message ?? '' },
  ];
  const setup = turnSetupOf({
    agent: parts.agent,
    tools: parts.tools,
    history,
    frontendTools: body.frontendTools,
    target: {
      organizationId: parts.ctx.organizationId,
      conversationId: parts.conversationId,
      userId: parts.ctx.userId,
    },
  });
  return Buffer.byteLength(JSON.stringify(setup)) <= MAX_INPUT_SETUP_BYTES ? setup : undefined;
}

/** Ends the browser sessions a deleted conversation owned. Browser sessions sit below the tools, which
 * conversations use: the service is handed this port (lib/services.ts) rather than importing that feature. */
export interface BrowserSessionEnder {
  endFor(organizationId: string, owner: { type: 'conversation'; conversationId: string }): Promise<void>;
}

/** Data of another feature that goes with a deleted conversation (its task plans, its analyses). Those
 * features are built on conversations, so they are reached through this port, wired in lib/services.ts. */
export interface ConversationDependent {
  removeForConversation(organizationId: string, conversationId: string): Promise<void>;
}

/** The other features a conversation touches (see ./ports.ts). */
export interface ConversationNeighbours {
  agents: AgentLookup;
  modelTools: ModelToolSource;
  /** Removed in this order when a conversation is deleted. */
  dependents: ConversationDependent[];
  browserSessions: BrowserSessionEnder;
}

export class ConversationsService {
  constructor(
    private readonly repos: Tenants<ConversationsStore>,
    private readonly temporal: TemporalDeps,
    private readonly access: AgentAccess,
    private readonly outbound: OutboundClient,
    /** Counts the organization's running turns (the `turns` kind, MAX_CONCURRENT_TURNS_PER_ORG). */
    private readonly admission: Admission,
    private readonly neighbours: ConversationNeighbours,
  ) {}

  private repo(ctx: RequestContext) {
    return this.repos.tenant(ctx.organizationId).conversations;
  }

  /** Admins and owners (conversations.all) read every conversation of the organization, as they read every
   * agent. Anyone else reads their own conversations while they may access the agent, or once the agent is
   * gone (there is nothing left to hide, and they can still read and delete what they wrote). Anything else
   * looks exactly like a missing conversation. */
  async load(ctx: RequestContext, id: string): Promise<ConversationDoc> {
    const conversation = await this.repo(ctx).get(id);
    if (conversation && ctx.capabilities.has('conversations.all')) return conversation;
    if (conversation?.creatorUserId !== ctx.userId) throw notFound('conversation');
    if (await this.access.canAccessAgent(ctx, conversation.agentId)) return conversation;
    if (await this.neighbours.agents.find(ctx.organizationId, conversation.agentId))
      throw notFound('conversation');
    return conversation;
  }

  async list(
    ctx: RequestContext,
    opts: { agentId?: string; q?: string; orderBy?: string; all?: boolean } & PageRequest,
  ) {
    const orderBy = opts.orderBy ?? 'last_message_created_at';
    const { items, total } = await this.repo(ctx).list({
      ...opts,
      orderBy,
      // all=true (admins and owners): every conversation of the organization, whoever made it, whatever agent.
      creatorUserId: opts.all ? undefined : ctx.userId,
      agentIds: opts.all ? undefined : await this.access.accessibleAgentIds(ctx),
    });
    return page(items.map(toConversationView), total, opts.offset);
  }

  /** The conversation with a page of its messages: the newest `limit` (before the cursor), in write order. */
  /** The conversation with all its messages (the spec's default), or the page `limit` asks for. */
  async get(ctx: RequestContext, id: string, page: { limit?: number; before?: number } = {}) {
    const conversation = await this.load(ctx, id);
    const repo = this.repo(ctx);
    const limit = page.limit ?? Infinity;
    // One more than asked tells whether older messages exist.
    const [window, totalMessages] = await Promise.all([
      repo.lastMessages(id, page.limit === undefined ? undefined : page.limit + 1, page.before),
      repo.countMessages(id),
    ]);
    const messages = window.length > limit ? window.slice(1) : window;
    return {
      ...toConversationView(conversation),
      messages: messages.map(toMessageView),
      totalMessages,
      olderMessagesCursor: window.length > limit ? String(messages[0]!.seq) : null,
    };
  }

  /**
   * Creates or continues a conversation; with a message, queues the turn and returns at once. A person's turn
   * runs on the interactive queue; one an automation starts (a schedule's or webhook's agent handler) is
   * `background` work and waits with the rest of it.
   */
  async create(ctx: RequestContext, body: ConversationCreateBody, opts: { background?: boolean } = {}) {
    if (body.callbackUrl) await this.checkCallbackUrl(body.callbackUrl);
    // The turn limit is read while the conversation or agent is read, and checked before anything is written
    // (one Redis read; requests racing for the last turn may pass it by a few, as its slot is taken at the start).
    const capacity = body.message
      ? this.admission.refuseIfFull(ctx.organizationId, ['turns'])
      : Promise.resolve();
    capacity.catch(() => undefined); // awaited below; a failed read must not leave it unhandled
    const repo = this.repo(ctx);
    const requestId = body.requestId ?? randomUUID();
    let conversation: ConversationDoc;
    let opening: { agent: ReturnType<typeof agentSettings>; tools: ModelTool[] } | undefined;
    if (body.conversationId) {
      conversation = await referenced(
        'conversationId',
        body.conversationId,
        this.load(ctx, body.conversationId),
      );
      if (conversation.agentId !== body.agentId)
        throw invalidReference(
          'conversationId',
          body.conversationId,
          ` as a conversation of ${body.agentId}`,
        );
      await capacity;
    } else {
      // A turn that opens a conversation hands its workflow the whole setup (turn-setup.ts): the agent's tools
      // are read alongside the access check, so it costs no extra round trip.
      const tools = body.message
        ? this.neighbours.modelTools.forAgent(ctx.organizationId, body.agentId)
        : undefined;
      tools?.catch(() => undefined); // awaited below; a failed read must not leave it unhandled
      const agent = await referenced(
        'agentId',
        body.agentId,
        this.access.getAccessibleAgent(ctx, body.agentId),
      );
      await capacity;
      const opened = await repo.openForRequest(requestId, {
        agentId: body.agentId,
        title: body.title ?? titleFrom(body.message ?? body.assistantMessage),
        creatorUserId: ctx.userId,
        isBrowserTask: body.isBrowserTask ?? false,
      });
      conversation = opened.doc;
      if (conversation.agentId !== body.agentId)
        throw conflict(`requestId ${requestId} was already used with another agent`);
      // A repeated request may find a conversation that has more in it by now: its turn reads it (loadTurn).
      if (opened.created && tools) opening = { agent: agentSettings(agent), tools: await tools };
    }
    const conversationId = conversation._id;
    /** The conversation as the last write left it, when a write returned it. */
    let written: ConversationDoc | null = null;
    if (body.assistantMessage) {
      await repo.putMessage({
        conversationId,
        requestId: `${requestId}:prefill`,
        role: 'assistant',
        status: 'complete',
        text: body.assistantMessage,
      });
    }
    if (body.message) {
      const { message } = await repo.putMessage(
        { conversationId, requestId, role: 'user', status: 'complete', text: body.message },
        false,
      );
      // The message is stored: the turn starts while the conversation records it (a repeat records it again).
      const recorded = repo.recordLastMessage(conversationId, message.createdAt);
      recorded.catch(() => undefined); // awaited below; a failed start must not leave it unhandled
      const workflowId = workflowIds.turn(ctx.organizationId, conversationId, requestId);
      await this.admission.startCounted(ctx.organizationId, 'turns', workflowId, () =>
        startIdempotent<TurnWorkflow>(this.temporal, WORKFLOWS.turn, {
          workflowId,
          // A requestId answers once, even after its turn completed.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          attributes: { organizationId: ctx.organizationId, agentId: conversation.agentId },
          interactive: !opts.background,
          args: [
            {
              organizationId: ctx.organizationId,
              conversationId,
              agentId: conversation.agentId,
              requestId,
              userId: ctx.userId,
              callbackUrl: body.callbackUrl,
              frontendTools: body.frontendTools,
              setup: opening && handedOverSetup({ ...opening, ctx, conversationId, body }),
            },
          ],
        }),
      );
      written = await recorded;
    }
    const fresh = written ?? (await repo.get(conversationId)) ?? conversation;
    const {
      conversationId: id,
      organizationId,
      agentId,
      title,
      creatorUserId,
      createdAt,
      updatedAt,
    } = toConversationView(fresh);
    return {
      conversationId: id,
      organizationId,
      agentId,
      title,
      creatorUserId,
      requestId,
      createdAt,
      updatedAt,
    };
  }

  async rename(ctx: RequestContext, id: string, title: string) {
    await this.load(ctx, id);
    const updated = await this.repo(ctx).rename(id, title);
    if (!updated) throw notFound('conversation');
    return toConversationView(updated);
  }

  async remove(ctx: RequestContext, id: string) {
    await this.load(ctx, id);
    await this.repo(ctx).remove(id);
    for (const dependent of this.neighbours.dependents)
      await dependent.removeForConversation(ctx.organizationId, id);
    // Its browser sessions end with it (their records stay, so an operator can still see what they did).
    await this.neighbours.browserSessions.endFor(ctx.organizationId, {
      type: 'conversation',
      conversationId: id,
    });
    return { organizationId: ctx.organizationId, conversationId: id };
  }

  /** A callbackUrl the service would refuse to call is refused now, before anything is written. */
  private async checkCallbackUrl(url: string) {
    try {
      await this.outbound.check(url);
    } catch (err) {
      if (err instanceof BlockedAddressError) throw badRequest(`callbackUrl refused: ${err.message}`);
      throw badRequest(`callbackUrl refused: its host does not resolve (${(err as Error).message})`);
    }
  }

  /** Delivers a chat client's result for a frontend tool call to the waiting turn. */
  async frontendToolResult(
    ctx: RequestContext,
    input: { conversationId: string; requestId: string; toolCallId: string; result: unknown },
  ) {
    await this.load(ctx, input.conversationId);
    if (!(await this.repo(ctx).hasTurn(input.conversationId, input.requestId))) throw notFound('turn');
    const handle = this.temporal.client.workflow.getHandle(
      workflowIds.turn(ctx.organizationId, input.conversationId, input.requestId),
    );
    await handle.signal(frontendToolResultSignal, { toolCallId: input.toolCallId, result: input.result });
  }

  /** A conversation for a turn, a tool or a workflow, which checked access when it started (null once it is
   * deleted). */
  async find(organizationId: string, conversationId: string): Promise<ConversationDoc | null> {
    return this.repos.tenant(organizationId).conversations.get(conversationId);
  }

  /** The conversation a request (an inbound mail) opens, for a workflow that checked the sender. */
  async createForRequest(
    organizationId: string,
    requestId: string,
    fields: Parameters<ConversationsRepository['createForRequest']>[1],
  ): Promise<ConversationDoc> {
    return this.repos.tenant(organizationId).conversations.createForRequest(requestId, fields);
  }

  /** Writes a turn's message once (see ConversationsRepository.putMessage), for a workflow. */
  async putMessage(organizationId: string, fields: Parameters<ConversationsRepository['putMessage']>[0]) {
    return this.repos.tenant(organizationId).conversations.putMessage(fields);
  }

  /** The message a turn wrote in this role, or null. */
  async message(
    organizationId: string,
    conversationId: string,
    requestId: string,
    role: 'user' | 'assistant',
  ) {
    return this.repos.tenant(organizationId).conversations.message(conversationId, requestId, role);
  }

  /** Whether the organization still has the conversation, with no access check: for what a turn of it started
   * or wrote (a trigger handler's turn, an agent tool's artifact). */
  async exists(organizationId: string, conversationId: string): Promise<boolean> {
    return Boolean(await this.find(organizationId, conversationId));
  }

  /** A turn's reply once it is stored (`complete`, or `error` when the turn failed), with no access check. */
  storedReply(organizationId: string, conversationId: string, requestId: string) {
    return this.repos.tenant(organizationId).conversations.reply(conversationId, requestId);
  }
}
