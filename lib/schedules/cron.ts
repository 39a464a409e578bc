import { badRequest } from '@lib/errors';

/** The five fields of a cron expression, in order, with the values each accepts (all schedules run in UTC). */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 6 },
] as const;

/** The shortest time between two fires a schedule may have unless `confirmHighFrequency` is true. */
export const MIN_CRON_INTERVAL_MINUTES = 15;

const PART = /^(\*|\d{1,2}(?:-\d{1,2})?)(?:\/(\d{1,2}))?$/;

/** The values one field selects; throws a 400 naming the field when it is not `*`, `,`, `-`, `/` and numbers
 * inside the field's range. */
function expandField(text: string, field: (typeof FIELDS)[number]): number[] {
  const bad = (why: string) =>
    badRequest(`cronExpression: the ${field.name} field '${text}' ${why}`, [
      { path: `cronExpression.${field.name}`, message: why },
    ]);
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const m = PART.exec(part);
    if (!m) throw bad(`is not valid: use numbers with '*', ',', '-' and '/' only`);
    const [, range, stepText] = m;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw bad('has a step of 0');
    let from: number = field.min;
    let to: number = field.max;
    if (range !== '*') {
      const [a, b] = range!.split('-').map(Number) as [number, number | undefined];
      from = a;
      to = b ?? (stepText === undefined ? a : field.max);
    }
    for (const v of [from, to])
      if (v < field.min || v > field.max)
        throw bad(`is out of range: ${v} is not within ${field.min}-${field.max}`);
    if (from > to) throw bad(`has a range that runs backwards (${from}-${to})`);
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return [...values].sort((a, b) => a - b);
}

export interface CronFields {
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  dayOfWeek: number[];
  /** day-of-month and day-of-week are both other than `*`: a day matches either (as most crons do) */
  eitherDay: boolean;
  parts: string[];
}

/** The expression's fields; a 400 naming the field that is wrong. */
export function parseCron(expression: string): CronFields {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5 || parts[0] === '')
    throw badRequest(
      `cronExpression must have five fields (minute hour day-of-month month day-of-week), got ${parts[0] === '' ? 0 : parts.length}`,
    );
  const [minute, hour, dayOfMonth, month, dayOfWeek] = FIELDS.map((f, i) => expandField(parts[i]!, f)) as [
    number[],
    number[],
    number[],
    number[],
    number[],
  ];
  return {
    minute,
    hour,
    dayOfMonth,
    month,
    dayOfWeek,
    eitherDay: parts[2] !== '*' && parts[4] !== '*',
    parts,
  };
}

function dayFires(f: CronFields, day: Date): boolean {
  if (!f.month.includes(day.getUTCMonth() + 1)) return false;
  const dom = f.dayOfMonth.includes(day.getUTCDate());
  const dow = f.dayOfWeek.includes(day.getUTCDay());
  if (f.eitherDay) return dom || dow;
  return dom && dow;
}

const DAY_MS = 86_400_000;
/** 28 years: the calendar (leap years and weekdays together) repeats after it, so every day pattern is seen. */
const CALENDAR_CYCLE_DAYS = 10_227;

/**
 * The shortest time between two consecutive fires, in minutes, or null when the expression never fires (31
 * February). Exact: the times of day a fire day has, and the gap from a day's last fire to the next day's first
 * when two consecutive days both fire.
 */
export function minIntervalMinutes(f: CronFields): number | null {
  const times = f.hour.flatMap((h) => f.minute.map((m) => h * 60 + m)).sort((a, b) => a - b);
  let firesAtAll = false;
  let consecutiveDays = false;
  let previousFired = false;
  const start = Date.UTC(2000, 0, 1);
  for (let i = 0; i < CALENDAR_CYCLE_DAYS && !consecutiveDays; i++) {
    const fires = dayFires(f, new Date(start + i * DAY_MS));
    if (fires && previousFired) consecutiveDays = true;
    firesAtAll ||= fires;
    previousFired = fires;
  }
  if (!firesAtAll) return null;
  let min = Infinity;
  for (let i = 1; i < times.length; i++) min = Math.min(min, times[i]! - times[i - 1]!);
  if (consecutiveDays) min = Math.min(min, 1440 - times[times.length - 1]! + times[0]!);
  // A single fire per day on days that never follow each other: at least a day apart.
  return Number.isFinite(min) ? min : 1440;
}

/** Validates an expression for a schedule: five valid fields, fires at all, and (unless confirmed) not more often
 * than every MIN_CRON_INTERVAL_MINUTES. */
export function checkCron(expression: string, confirmHighFrequency: boolean): CronFields {
  const fields = parseCron(expression);
  const interval = minIntervalMinutes(fields);
  if (interval === null) throw badRequest(`cronExpression '${expression}' never fires (no such date)`);
  if (interval < MIN_CRON_INTERVAL_MINUTES && !confirmHighFrequency)
    throw badRequest(
      `cronExpression '${expression}' fires ${interval} minute${interval === 1 ? '' : 's'} apart; ` +
        `schedules may fire at most every ${MIN_CRON_INTERVAL_MINUTES} minutes unless confirmHighFrequency is true`,
    );
  return fields;
}

/**
 * The next fire after `from` (UTC), or null when the expression does not parse or never fires: the first fire
 * minute, day by day over one calendar cycle. Computed here rather than by a cron library: croner 11.0.0 skipped
 * the first days of a month after one that lacks a listed day (`0 0 1,31 * *` after 26 February gave 31 March).
 */
export function nextFire(expression: string, from: Date): Date | null {
  let f: CronFields;
  try {
    f = parseCron(expression);
  } catch {
    return null;
  }
  const start = (Math.floor(from.getTime() / 60_000) + 1) * 60_000;
  const firstDay = Math.floor(start / DAY_MS) * DAY_MS;
  for (let i = 0; i <= CALENDAR_CYCLE_DAYS; i++) {
    const day = new Date(firstDay + i * DAY_MS);
    if (!dayFires(f, day)) continue;
    for (const hour of f.hour)
      for (const minute of f.minute) {
        const at = day.getTime() + hour * 3_600_000 + minute * 60_000;
        if (at >= start) return new Date(at);
      }
  }
  return null;
}

/**
 * The expression as Temporal cron strings. Temporal matches day-of-month and day-of-week together (both must
 * hold); standard cron fires on either when both are restricted, so that case becomes two expressions whose
 * fires are merged.
 */
export function temporalCronStrings(f: CronFields): string[] {
  const [minute, hour, dom, month, dow] = f.parts;
  if (!f.eitherDay) return [f.parts.join(' ')];
  return [`${minute} ${hour} ${dom} ${month} *`, `${minute} ${hour} * ${month} ${dow}`];
}
