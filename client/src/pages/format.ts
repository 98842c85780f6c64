export { byteUnit, formatBytes } from '../../../shared/sizes.js';

/** Counts with the language's digit grouping (1,234 / 1,234). */
export function formatCount(language: string, value: number): string {
  return new Intl.NumberFormat(language).format(value);
}

/**
 * The archive's time zone (REPORT_TIME_ZONE, from the session): pages show times in it, as the
 * CSV exports do, so a page and its export agree whatever the PC's clock is set to. Undefined
 * until the session is read (then the PC's zone).
 */
let archiveTimeZone: string | undefined;
export function showTimesIn(timeZone: string | undefined): void {
  archiveTimeZone = timeZone;
}
export function timeZoneShown(): string | undefined {
  return archiveTimeZone;
}

/** A moment (ISO 8601) in the archive's time zone and the reader's language. */
export function formatTime(language: string, iso: string, seconds = false): string {
  return new Intl.DateTimeFormat(language, {
    dateStyle: 'medium',
    timeStyle: seconds ? 'medium' : 'short',
    ...(archiveTimeZone && { timeZone: archiveTimeZone }),
  }).format(new Date(iso));
}

/** A calendar day (YYYY-MM-DD) as written, whatever the reader's time zone: it is already the archive's day. */
export function formatDay(language: string, day: string): string {
  const [y, m, d] = day.split('-').map(Number);
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeZone: 'UTC' }).format(
    Date.UTC(y!, m! - 1, d ?? 1),
  );
}

/** A month (YYYY-MM). */
export function formatMonth(language: string, month: string): string {
  const [y, m] = month.split('-').map(Number);
  return new Intl.DateTimeFormat(language, { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(
    Date.UTC(y!, m! - 1, 1),
  );
}

/** A unit's place, from the city down. */
export function unitPlace(unit: {
  city: string;
  county?: string | null;
  town?: string | null;
  street?: string | null;
}): string {
  return [unit.city, unit.county, unit.town, unit.street].filter(Boolean).join(' / ');
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** A moment's wall-clock fields in the archive's time zone (the PC's before the session is read). */
function wallClock(at: Date): { y: number; m: number; d: number; h: number; min: number } {
  if (!archiveTimeZone)
    return { y: at.getFullYear(), m: at.getMonth() + 1, d: at.getDate(), h: at.getHours(), min: at.getMinutes() };
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: archiveTimeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return { y: part('year'), m: part('month'), d: part('day'), h: part('hour') % 24, min: part('minute') };
}

/** A moment (ISO 8601) as the day (YYYY-MM-DD) and time (HH:MM) the archive's clock showed then. */
export function archiveDayAndClock(iso: string): { day: string; clock: string } | null {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return null;
  const w = wallClock(at);
  return { day: `${w.y}-${pad2(w.m)}-${pad2(w.d)}`, clock: `${pad2(w.h)}:${pad2(w.min)}` };
}

/** The moment (ISO 8601) the archive's clock shows a day (YYYY-MM-DD) and time (HH:MM); null: not a time. */
export function momentOnArchiveClock(day: string, clock: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const c = /^(\d{2}):(\d{2})$/.exec(clock);
  if (!m || !c) return null;
  const wanted = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(c[1]), Number(c[2]));
  if (Number.isNaN(wanted)) return null;
  // The zone's offset at the guess, applied twice: right on either side of a change of offset.
  let at = wanted;
  for (let i = 0; i < 2; i++) {
    const w = wallClock(new Date(at));
    at += wanted - Date.UTC(w.y, w.m - 1, w.d, w.h, w.min);
  }
  return new Date(at).toISOString();
}
