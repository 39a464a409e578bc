// ISO 8601 calendar dates and date-times: 2024-03-01, 2024-03-01T10:20, 2024-03-01T10:20:30.123Z,
// 2024-03-01 10:20:30+10:00. A date-time without a zone designator is taken as UTC; a bare date is midnight UTC.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
/** Date.UTC reads years 0-99 as 1900-1999: shift such years by a 400-year cycle (always 146097 days). */
const CYCLE_MS = 146_097 * 86_400_000;

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const int = (text: string | undefined) => (text === undefined ? 0 : parseInt(text, 10));

/** Parses an ISO 8601 timestamp to a Date, or returns null when the text is not one (or names no real
 * instant, like February 30th or 25:00). */
export function parseIsoTimestamp(text: string): Date | null {
  const m = ISO_8601.exec(text.trim());
  if (!m) return null;
  const year = int(m[1]);
  const month = int(m[2]);
  const day = int(m[3]);
  const hour = int(m[4]);
  const minute = int(m[5]);
  const second = int(m[6]);
  const millis = m[7] === undefined ? 0 : int(m[7].padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1) return null;
  if (day > (month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] as number))) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (m[9]) {
    const oh = int(m[10]);
    const om = int(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const shifted = year < 100;
  const utc = Date.UTC(shifted ? year + 400 : year, month - 1, day, hour, minute, second, millis);
  return new Date(utc - (shifted ? CYCLE_MS : 0) - offsetMinutes * 60_000);
}
