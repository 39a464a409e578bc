import type { ScheduleHandlersRepository } from './schedule-handlers.repository';
import type { ScheduleTriggersRepository } from './schedule-triggers.repository';

/** The schedules feature's own collections, for one organization. */
export interface SchedulesStore {
  scheduleTriggers: ScheduleTriggersRepository;
  scheduleHandlers: ScheduleHandlersRepository;
}
