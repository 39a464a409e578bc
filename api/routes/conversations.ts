import type { ConversationCreateBody } from '@lib/conversations/conversations.service';
import type { Deps } from '@lib/deps';
import { forbidden } from '@lib/errors';
import { pageRequest } from '@lib/paging';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

export function conversationsHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.conversations;
  const conversationId = (req: Parameters<typeof param>[0]) => param(req, 'conversationId');
  return {
    async listConversations(req, res) {
      const { agentId, q, orderBy, all } = req.query as Record<string, string | boolean | undefined>;
      const ctx = ctxOf(req);
      const listAll = String(all) === 'true';
      if (listAll && !ctx.capabilities.has('conversations.all'))
        throw forbidden('all=true needs the admin or owner role');
      res.json(
        await service.list(ctx, {
          agentId: agentId as string | undefined,
          q: q as string | undefined,
          orderBy: orderBy as string | undefined,
          all: listAll,
          ...pageRequest(req.query),
        }),
      );
    },
    async createConversation(req, res) {
      res.status(201).json(await service.create(ctxOf(req), body<ConversationCreateBody>(req)));
    },
    async getConversation(req, res) {
      const { messagesLimit, messagesBefore } = req.query as {
        messagesLimit?: string;
        messagesBefore?: string;
      };
      const page = {
        limit: messagesLimit === undefined ? undefined : Number(messagesLimit),
        before: messagesBefore === undefined ? undefined : Number(messagesBefore),
      };
      res.json(await service.get(ctxOf(req), conversationId(req), page));
    },
    async renameConversation(req, res) {
      res.json(await service.rename(ctxOf(req), conversationId(req), body<{ title: string }>(req).title));
    },
    async deleteConversation(req, res) {
      res.json(await service.remove(ctxOf(req), conversationId(req)));
    },
  };
}
