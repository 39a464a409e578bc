import fc from 'fast-check';

/*
 * A plain cron evaluator written from the wording of docs/schedules.md ("five fields in UTC; `*`, `,`, `-`, `/` and
 * numbers; when day-of-month and day-of-week are both other than `*`, a day matching either fires"), for the
 * property tests of lib/schedules/cron.ts. It filters each range by its step instead of stepping through it,
 * and finds gaps by listing fire days, so it shares no code or shape with the production parser.
 */

const RANGES = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 6],
] as const;

export interface ReferenceFields {
  minute: number[];
  hour: number[];
  dayOfMonth: number[];
  month: number[];
  dayOfWeek: number[];
  either: boolean;
}

function values(text: string, min: number, max: number): number[] {
  const out = new Set<number>();
  for (const part of text.split(',')) {
    const [base, stepText] = part.split('/') as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    let lo = min;
    let hi = max;
    if (base !== '*') {
      const [a, b] = base.split('-');
      lo = Number(a);
      hi = b !== undefined ? Number(b) : stepText !== undefined ? max : lo;
    }
    for (let v = min; v <= max; v++) if (v >= lo && v <= hi && (v - lo) % step === 0) out.add(v);
  }
  return [...out].sort((x, y) => x - y);
}

export function referenceFields(expression: string): ReferenceFields {
  const parts = expression.split(' ');
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parts.map((p, i) =>
    values(p, RANGES[i]![0], RANGES[i]![1]),
  );
  return {
    minute: minute!,
    hour: hour!,
    dayOfMonth: dayOfMonth!,
    month: month!,
    dayOfWeek: dayOfWeek!,
    either: parts[2] !== '*' && parts[4] !== '*',
  };
}

function dayFires(f: ReferenceFields, d: Date): boolean {
  if (!f.month.includes(d.getUTCMonth() + 1)) return false;
  const dom = f.dayOfMonth.includes(d.getUTCDate());
  const dow = f.dayOfWeek.includes(d.getUTCDay());
  return f.either ? dom || dow : dom && dow;
}

export function fires(f: ReferenceFields, t: Date): boolean {
  return dayFires(f, t) && f.hour.includes(t.getUTCHours()) && f.minute.includes(t.getUTCMinutes());
}

const DAY = 86_400_000;
/** 28 years + a little: the Gregorian weekday-and-leap pattern repeats within it (2000 is a leap year). */
const SPAN_DAYS = 10_300;

function timesOfDay(f: ReferenceFields): number[] {
  return f.hour.flatMap((h) => f.minute.map((m) => h * 60 + m)).sort((a, b) => a - b);
}

/** The shortest time between two consecutive fires (minutes), or null when nothing ever fires. */
export function referenceGap(f: ReferenceFields): number | null {
  const start = Date.UTC(2000, 0, 1);
  const days: number[] = [];
  for (let i = 0; i < SPAN_DAYS; i++) if (dayFires(f, new Date(start + i * DAY))) days.push(i);
  if (!days.length) return null;
  const times = timesOfDay(f);
  let gap = Infinity;
  for (let i = 1; i < times.length; i++) gap = Math.min(gap, times[i]! - times[i - 1]!);
  for (let i = 1; i < days.length; i++)
    gap = Math.min(gap, (days[i]! - days[i - 1]!) * 1440 - times[times.length - 1]! + times[0]!);
  return Number.isFinite(gap) ? gap : null;
}

/** The first fire strictly after `from` (to the minute), or null when none within the span. */
export function referenceNext(f: ReferenceFields, from: Date): Date | null {
  const times = timesOfDay(f);
  const minuteAfter = Math.floor(from.getTime() / 60_000) + 1;
  const firstDay = Math.floor((minuteAfter * 60_000) / DAY) * DAY;
  for (let i = 0; i < SPAN_DAYS; i++) {
    const day = firstDay + i * DAY;
    if (!dayFires(f, new Date(day))) continue;
    const t = times.find((m) => day + m * 60_000 >= minuteAfter * 60_000);
    if (t !== undefined) return new Date(day + t * 60_000);
  }
  return null;
}

/** One field: a list of `*`, `n`, `a-b`, each maybe with `/step`. */
function field(min: number, max: number): fc.Arbitrary<string> {
  const n = fc.integer({ min, max });
  const step = fc.integer({ min: 1, max: max - min + 2 });
  const range = fc.tuple(n, n).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`);
  const part = fc.oneof(
    { weight: 3, arbitrary: fc.constant('*') },
    { weight: 3, arbitrary: n.map(String) },
    { weight: 2, arbitrary: range },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.oneof(fc.constant('*'), n.map(String), range), step)
        .map(([b, s]) => `${b}/${s}`),
    },
  );
  return fc.array(part, { minLength: 1, maxLength: 3 }).map((parts) => parts.join(','));
}

/** Valid five-field expressions, biased towards the forms people write. */
export const cronExpression: fc.Arbitrary<string> = fc
  .tuple(...RANGES.map(([min, max]) => field(min, max)))
  .map((fields) => fields.join(' '));
