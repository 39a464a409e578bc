import { Router } from 'express';
import type { Deps } from '@lib/deps';
import { forbidden } from '@lib/errors';
import { pageRequest } from '@lib/paging';
import { ConversationsService, type ConversationCreateBody } from '@lib/services/conversations.service';
import { body, ctxOf, param } from '@api/context';

export function conversationsRouter(deps: Deps): Router {
  const service = new ConversationsService(deps.models, deps.temporal);
  const router = Router();
  const base = '/orgs/:organizationId/conversations';
  router.get(base, async (req, res) => {
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
  });
  router.post(base, async (req, res) => {
    res.status(201).json(await service.create(ctxOf(req), body<ConversationCreateBody>(req)));
  });
  router.get(`${base}/:conversationId`, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'conversationId')));
  });
  router.put(`${base}/:conversationId`, async (req, res) => {
    res.json(
      await service.rename(ctxOf(req), param(req, 'conversationId'), body<{ title: string }>(req).title),
    );
  });
  router.delete(`${base}/:conversationId`, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'conversationId')));
  });
  return router;
}
