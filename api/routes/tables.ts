import express, { Router, type RequestHandler } from 'express';
import type { Deps } from '@lib/deps';
import { AppError } from '@lib/errors';
import { TABLE_LIMITS } from '@lib/tables/limits';
import type { CreateTableBody } from '@lib/tables/tables.service';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const BATCH_PATH = '/orgs/:organizationId/tables/:tableName/data/batch';

const rowData = (req: express.Request) => body<{ data: unknown }>(req).data;

/** Query values arrive validated by the OpenAPI middleware; this only converts them. */
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

export function tablesHandlers(deps: Deps): OperationHandlers {
  const service = deps.services.tables;
  const table = (req: express.Request) => param(req, 'tableName');
  const column = (req: express.Request) => param(req, 'columnName');
  const rowId = (req: express.Request) => Number(param(req, 'id'));
  return {
    async listTables(req, res) {
      const page = { limit: numberOr(req.query.limit, 20), offset: numberOr(req.query.offset, 0) };
      res.json(await service.list(ctxOf(req), page));
    },
    async createTable(req, res) {
      res.status(201).json(await service.create(ctxOf(req), body<CreateTableBody>(req)));
    },
    async getTable(req, res) {
      res.json(await service.get(ctxOf(req), table(req)));
    },
    async deleteTable(req, res) {
      res.json(await service.remove(ctxOf(req), table(req)));
    },
    async listTableRows(req, res) {
      const { orderBy, filters } = req.query as { orderBy?: string; filters?: string };
      const query = {
        limit: numberOr(req.query.limit, TABLE_LIMITS.defaultPageSize),
        offset: numberOr(req.query.offset, 0),
        orderBy,
        filters,
      };
      res.json(await service.listRows(ctxOf(req), table(req), query));
    },
    async insertTableRow(req, res) {
      res.status(201).json(await service.insertRow(ctxOf(req), table(req), rowData(req)));
    },
    async insertTableRows(req, res) {
      res.json(await service.insertRows(ctxOf(req), table(req), body<{ data: unknown[] }>(req).data));
    },
    async updateTableRow(req, res) {
      res.json(await service.updateRow(ctxOf(req), table(req), rowId(req), rowData(req)));
    },
    async deleteTableRow(req, res) {
      res.json(await service.deleteRow(ctxOf(req), table(req), rowId(req)));
    },
    async renameTableColumn(req, res) {
      const { newName } = body<{ newName: string }>(req);
      res.json(await service.renameColumn(ctxOf(req), table(req), column(req), newName));
    },
    async linkTableColumn(req, res) {
      const { ddFieldName } = body<{ ddFieldName: string }>(req);
      res.json(await service.linkColumn(ctxOf(req), table(req), column(req), ddFieldName));
    },
    async unlinkTableColumn(req, res) {
      res.json(await service.unlinkColumn(ctxOf(req), table(req), column(req)));
    },
  };
}
