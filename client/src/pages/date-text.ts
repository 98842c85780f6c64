/**
 * Calendar days and times as the app's date fields write and read them. Inside, a day is
 * `YYYY-MM-DD` (what the API takes); on screen it is written in the page's language, whatever the
 * browser's: 2026年11月27日 on a Chinese page, 2026-11-27 on an English one. The browser's own
 * date inputs follow the browser's language instead (docs/decisions/date-fields.md).
 */

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD` of a year, a month (1-12) and a day, if that day exists. */
function dayOf(year: number, month: number, day: number): string | undefined {
  if (year < 1000 || year > 9999 || month < 1 || month > 12 || day < 1) return undefined;
  const at = new Date(Date.UTC(year, month - 1, day));
  if (at.getUTCMonth() !== month - 1) return undefined; // 2 月 30 日 rolls over into March
  return `${year}-${pad(month)}-${pad(day)}`;
}

/** A day as the page writes it: `2026年11月27日` in Chinese, `2026-11-27` in English. */
export function dayText(language: string, day: string): string {
  const [year, month, date] = day.split('-').map(Number);
  if (!year || !month || !date) return day;
  return language === 'zh-CN' ? `${year}年${month}月${date}日` : `${year}-${pad(month)}-${pad(date)}`;
}

/**
 * A typed day: `2026-11-27` (also with `/` or `.`, and one-digit months and days), `20261127`,
 * or `2026年11月27日`, in full-width digits too (a Chinese input method types those); a day
 * without its year (`11月28日`, `11-28`) is one of the current year, the year of `today`
 * (`YYYY-MM-DD`), as a clerk writing a date on a form means it.
 * Empty: null. Anything else, or a day that does not exist: undefined.
 */
export function parseDay(text: string, today: string = localToday()): string | null | undefined {
  const typed = text.normalize('NFKC').trim();
  if (typed === '') return null;
  const written = /^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?$/.exec(typed);
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(typed);
  const parts = written ?? compact;
  if (parts) return dayOf(Number(parts[1]), Number(parts[2]), Number(parts[3]));
  const yearless = /^(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?$/.exec(typed);
  return yearless ? dayOf(Number(today.slice(0, 4)), Number(yearless[1]), Number(yearless[2])) : undefined;
}

/** A typed time of day, 24-hour: `9:05`, `09:05`, `0905`, `9时5分`; empty: null; else undefined. */
export function parseTime(text: string): string | null | undefined {
  const typed = text.normalize('NFKC').trim();
  if (typed === '') return null;
  const parts = /^(\d{1,2})\s*(?::|时|点)\s*(\d{1,2})\s*分?$/.exec(typed) ?? /^(\d{2})(\d{2})$/.exec(typed);
  if (!parts) return undefined;
  const [hours, minutes] = [Number(parts[1]), Number(parts[2])];
  return hours < 24 && minutes < 60 ? `${pad(hours)}:${pad(minutes)}` : undefined;
}

/** A `YYYY-MM-DD` day's midnight in UTC, moved by whole days and months. */
function utcOf(day: string, days = 0, months = 0): Date {
  const [year, month, date] = [day.slice(0, 4), day.slice(5, 7), day.slice(8, 10)].map(Number);
  return new Date(Date.UTC(year!, month! - 1 + months, date! + days));
}

/** A day moved by whole days (negative: back). */
export function addDays(day: string, days: number): string {
  return utcOf(day, days).toISOString().slice(0, 10);
}

/** The same day of another month (the month's last day where it is shorter): 31 March less a month is 28 or 29 February. */
export function addMonths(day: string, months: number): string {
  const first = utcOf(`${day.slice(0, 8)}01`, 0, months);
  const last = utcOf(first.toISOString().slice(0, 10), -1, 1).getUTCDate();
  return dayOf(first.getUTCFullYear(), first.getUTCMonth() + 1, Math.min(Number(day.slice(8, 10)), last)) ?? day;
}

/** Monday = 0 … Sunday = 6: weeks start on Monday, as the reports' weeks (ISO 8601) do. */
export function weekday(day: string): number {
  return (utcOf(day).getUTCDay() + 6) % 7;
}

/**
 * A month as the calendar shows it: whole weeks, Monday first, from the week of the 1st to the
 * week of the last day (days of the months around it included, to fill the weeks).
 */
export function monthWeeks(month: string): string[][] {
  const first = `${month}-01`;
  const start = addDays(first, -weekday(first));
  const last = addDays(addMonths(first, 1), -1);
  const weeks: string[][] = [];
  for (let day = start; day <= last;) {
    const week: string[] = [];
    for (let i = 0; i < 7; i++, day = addDays(day, 1)) week.push(day);
    weeks.push(week);
  }
  return weeks;
}

/** Today in the browser's calendar (`YYYY-MM-DD`). */
export function localToday(now = new Date()): string {
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}
