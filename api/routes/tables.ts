import express, { Router, type RequestHandler } from 'express';
import type { Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { TablesService, type CreateTableBody } from '@lib/services/tables.service';
import { TABLE_LIMITS } from '@lib/tables/limits';
import { ctxOf, param } from '@api/context';

const BATCH_PATH = '/orgs/:organizationId/tables/:tableName/data/batch';

/** Query values arrive validated (and defaulted) by the OpenAPI middleware; this only converts them. */
/** The JSON body, already validated against the operation's schema in openapi.yaml. */
const bodyOf = <T>(req: express.Request) => req.body as T;
const rowData = (req: express.Request) => bodyOf<{ data: unknown }>(req).data;

function numberOr(value: unknown, fallback: number): number {
  return value === undefined ? fallback : Number(value);
}

/**
 * The batch insert route takes a larger body than the app-wide JSON limit (1000 rows of a few KB each).
 * Mount before the app-wide parser: a body parsed here is not parsed again.
 */
export function tablesBatchBodyParser(): RequestHandler {
  const parse = express.json({ limit: TABLE_LIMITS.batchBodyLimit });
  const router = Router();
  router.post(BATCH_PATH, (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type === 'entity.too.large') {
        const message = `a batch insert body may be at most ${TABLE_LIMITS.batchBodyLimit}; split the rows into smaller batches`;
        next(new AppError(413, 'payload_too_large', message));
        return;
      }
      next(err);
    });
  });
  return router;
}

export function tablesRouter(deps: Deps): Router {
  const service = new TablesService(deps.models);
  const router = Router();
  const base = '/orgs/:organizationId/tables';
  const table = `${base}/:tableName`;
  const rowId = (req: express.Request) => Number(param(req, 'id'));

  router.get(base, async (req, res) => {
    const page = { limit: numberOr(req.query.limit, 20), offset: numberOr(req.query.offset, 0) };
    res.json(await service.list(ctxOf(req), page));
  });
  router.post(base, async (req, res) => {
    res.status(201).json(await service.create(ctxOf(req), bodyOf<CreateTableBody>(req)));
  });
  router.get(table, async (req, res) => {
    res.json(await service.get(ctxOf(req), param(req, 'tableName')));
  });
  router.delete(table, async (req, res) => {
    res.json(await service.remove(ctxOf(req), param(req, 'tableName')));
  });

  router.get(`${table}/data`, async (req, res) => {
    const { orderBy, filters } = req.query as { orderBy?: string; filters?: string };
    const query = {
      limit: numberOr(req.query.limit, TABLE_LIMITS.defaultPageSize),
      offset: numberOr(req.query.offset, 0),
      orderBy,
      filters,
    };
    res.json(await service.listRows(ctxOf(req), param(req, 'tableName'), query));
  });
  router.post(`${table}/data`, async (req, res) => {
    res.status(201).json(await service.insertRow(ctxOf(req), param(req, 'tableName'), rowData(req)));
  });
  router.post(`${table}/data/batch`, async (req, res) => {
    res.json(
      await service.insertRows(ctxOf(req), param(req, 'tableName'), bodyOf<{ data: unknown[] }>(req).data),
    );
  });
  router.put(`${table}/data/:id`, async (req, res) => {
    res.json(await service.updateRow(ctxOf(req), param(req, 'tableName'), rowId(req), rowData(req)));
  });
  router.delete(`${table}/data/:id`, async (req, res) => {
    res.json(await service.deleteRow(ctxOf(req), param(req, 'tableName'), rowId(req)));
  });

  const column = `${table}/columns/:columnName`;
  router.put(column, async (req, res) => {
    const { newName } = bodyOf<{ newName: string }>(req);
    res.json(
      await service.renameColumn(ctxOf(req), param(req, 'tableName'), param(req, 'columnName'), newName),
    );
  });
  router.post(`${column}/dd-link`, async (req, res) => {
    const { ddFieldName } = bodyOf<{ ddFieldName: string }>(req);
    res.json(
      await service.linkColumn(ctxOf(req), param(req, 'tableName'), param(req, 'columnName'), ddFieldName),
    );
  });
  router.delete(`${column}/dd-link`, async (req, res) => {
    res.json(await service.unlinkColumn(ctxOf(req), param(req, 'tableName'), param(req, 'columnName')));
  });
  return router;
}
