export { byteUnit, formatBytes } from '../../../shared/sizes.js';

/** Counts with the language's digit grouping (1,234 / 1,234). */
export function formatCount(language: string, value: number): string {
  return new Intl.NumberFormat(language).format(value);
}

/** A moment (ISO 8601) in the reader's time zone and language. */
export function formatTime(language: string, iso: string, seconds = false): string {
  return new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: seconds ? 'medium' : 'short' }).format(
    new Date(iso),
  );
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
