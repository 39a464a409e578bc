import express, { Router, type Request, type RequestHandler } from 'express';
import type { Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { pageRequest } from '@lib/paging';
import type { WebhookHandlerBody } from '@lib/webhooks/webhook-handlers.service';
import type { WebhookBody } from '@lib/webhooks/webhooks.service';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const EXECUTE_PATH = '/orgs/:organizationId/webhooks/:webhookId/execute';
type WithRawBody = Request & { rawBody?: Buffer };

/**
 * Deliveries get their own body parser: any JSON (not only objects), at most `limit` (413 beyond), and the raw
 * bytes kept for signature verification.
 */
export function webhookBodyParser(limit: string): RequestHandler {
  const parse = express.json({
    limit,
    strict: false,
    verify: (req, _res, buf) => {
      (req as WithRawBody).rawBody = buf;
    },
  });
  const router = Router();
  router.post(EXECUTE_PATH, (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.too.large') {
        next(new AppError(413, 'payload_too_large', `a webhook delivery body may be at most ${limit}`));
        return;
      }
      next(err);
    });
  });
  return router;
}

const webhookId = (req: Request) => param(req, 'webhookId');
const handlerId = (req: Request) => param(req, 'handlerId');

export function webhooksHandlers(deps: Deps): OperationHandlers {
  const { webhooks, webhookHandlers, webhookDeliveries } = deps.services;
  return {
    async listWebhooks(req, res) {
      res.json(await webhooks.list(ctxOf(req), pageRequest(req.query)));
    },
    async createWebhook(req, res) {
      res.status(201).json(await webhooks.create(ctxOf(req), body<WebhookBody & { name: string }>(req)));
    },
    async getWebhook(req, res) {
      res.json(await webhooks.get(ctxOf(req), webhookId(req)));
    },
    async updateWebhook(req, res) {
      res.json(await webhooks.update(ctxOf(req), webhookId(req), body<WebhookBody>(req)));
    },
    async deleteWebhook(req, res) {
      res.json(await webhooks.remove(ctxOf(req), webhookId(req)));
    },
    async executeWebhook(req, res) {
      await webhookDeliveries.accept({
        organizationId: param(req, 'organizationId'),
        webhookId: webhookId(req),
        rawBody: (req as WithRawBody).rawBody ?? Buffer.alloc(0),
        body: req.body,
        headers: req.headers,
        method: req.method,
        path: req.path,
        queryParams: req.query,
      });
      res.json({});
    },
    async listWebhookDeliveries(req, res) {
      res.json(await webhooks.listDeliveries(ctxOf(req), webhookId(req), pageRequest(req.query)));
    },
    async getWebhookDelivery(req, res) {
      res.json(await webhooks.getDelivery(ctxOf(req), webhookId(req), param(req, 'deliveryId')));
    },
    async listWebhookHandlers(req, res) {
      res.json(await webhookHandlers.list(ctxOf(req), webhookId(req), pageRequest(req.query)));
    },
    async createWebhookHandler(req, res) {
      res
        .status(201)
        .json(await webhookHandlers.create(ctxOf(req), webhookId(req), body<WebhookHandlerBody>(req)));
    },
    async getWebhookHandler(req, res) {
      res.json(await webhookHandlers.get(ctxOf(req), webhookId(req), handlerId(req)));
    },
    async updateWebhookHandler(req, res) {
      res.json(
        await webhookHandlers.update(
          ctxOf(req),
          webhookId(req),
          handlerId(req),
          body<WebhookHandlerBody>(req),
        ),
      );
    },
    async deleteWebhookHandler(req, res) {
      res.json(await webhookHandlers.remove(ctxOf(req), webhookId(req), handlerId(req)));
    },
  };
}
