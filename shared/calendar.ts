/**
 * Calendar days as reports count them: `YYYY-MM-DD` strings, already in the archive's time zone,
 * so weeks and months follow from the text alone (the same way in SQL, MongoDB and the browser).
 */

const DAY_MS = 86_400_000;

function utcOf(day: string): number {
  return Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)));
}

const dayText = (utc: number) => new Date(utc).toISOString().slice(0, 10);

/** The Monday that starts the ISO week of `day`. */
export function weekOf(day: string): string {
  const utc = utcOf(day);
  const sinceMonday = (new Date(utc).getUTCDay() + 6) % 7;
  return dayText(utc - sinceMonday * DAY_MS);
}

/** `YYYY-MM`. */
export function monthOf(day: string): string {
  return day.slice(0, 7);
}

/** The day after `day`. */
export function nextDay(day: string): string {
  return dayText(utcOf(day) + DAY_MS);
}
