import type { Request } from 'express';
import type { Deps } from '@lib/deps';
import { pageRequest } from '@lib/paging';
import type { ScheduleHandlerBody } from '@lib/schedules/schedule-handlers.service';
import type { ScheduleBody } from '@lib/schedules/schedules.service';
import { body, ctxOf, param } from '@api/context';
import type { OperationHandlers } from '@api/operations';

const triggerId = (req: Request) => param(req, 'triggerId');
const handlerId = (req: Request) => param(req, 'handlerId');
const optional = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function schedulesHandlers(deps: Deps): OperationHandlers {
  const { schedules, scheduleHandlers } = deps.services;
  return {
    async listSchedules(req, res) {
      res.json(
        await schedules.list(ctxOf(req), {
          ...pageRequest(req.query),
          actionChainId: optional(req.query.actionChainId),
          agentId: optional(req.query.agentId),
          workflowId: optional(req.query.workflowId),
        }),
      );
    },
    async createSchedule(req, res) {
      res.status(201).json(await schedules.create(ctxOf(req), body<ScheduleBody>(req)));
    },
    async getSchedule(req, res) {
      res.json(await schedules.get(ctxOf(req), triggerId(req)));
    },
    async updateSchedule(req, res) {
      res.json(await schedules.update(ctxOf(req), triggerId(req), body<ScheduleBody>(req)));
    },
    async deleteSchedule(req, res) {
      res.json(await schedules.remove(ctxOf(req), triggerId(req)));
    },
    async getScheduleRuns(req, res) {
      res.json(await schedules.runs(ctxOf(req), triggerId(req)));
    },
    async listScheduleHandlers(req, res) {
      res.json(await scheduleHandlers.list(ctxOf(req), triggerId(req), pageRequest(req.query)));
    },
    async createScheduleHandler(req, res) {
      res
        .status(201)
        .json(await scheduleHandlers.create(ctxOf(req), triggerId(req), body<ScheduleHandlerBody>(req)));
    },
    async getScheduleHandler(req, res) {
      res.json(await scheduleHandlers.get(ctxOf(req), triggerId(req), handlerId(req)));
    },
    async updateScheduleHandler(req, res) {
      res.json(
        await scheduleHandlers.update(
          ctxOf(req),
          triggerId(req),
          handlerId(req),
          body<ScheduleHandlerBody>(req),
        ),
      );
    },
    async deleteScheduleHandler(req, res) {
      res.json(await scheduleHandlers.remove(ctxOf(req), triggerId(req), handlerId(req)));
    },
  };
}
