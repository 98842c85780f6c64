import { nextDay } from '../../shared/calendar.js';

/**
 * The report time zone's calendar: which day an upload counts on, and when a day begins. Clerks
 * think in local days (a 00:30 upload in Beijing belongs to that date, not to UTC's day before).
 */
export class ReportCalendar {
  private readonly days: Intl.DateTimeFormat;
  private readonly parts: Intl.DateTimeFormat;

  /** Throws RangeError for a zone the runtime does not know. */
  constructor(readonly timeZone: string) {
    // en-CA writes dates as YYYY-MM-DD.
    this.days = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    this.parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  dayOf(at: Date): string {
    return this.days.format(at);
  }

  /** The first instant of `day` in the zone. */
  startOf(day: string): Date {
    const midnightUtc = Date.parse(`${day}T00:00:00Z`);
    // Shift by the zone's offset at that moment, then once more in case the offset changed between (DST).
    let at = midnightUtc - this.offsetAt(midnightUtc);
    at = midnightUtc - this.offsetAt(at);
    // Where clocks jump forward at midnight the day begins later (00:00 does not exist): step to
    // its first quarter hour.
    while (this.dayOf(new Date(at)) < day) at += 15 * 60_000;
    return new Date(at);
  }

  /** The first instant after `day`. */
  endOf(day: string): Date {
    return this.startOf(nextDay(day));
  }

  /** Local time minus UTC, in ms, at instant `utc`. */
  private offsetAt(utc: number): number {
    const p = Object.fromEntries(this.parts.formatToParts(new Date(utc)).map((x) => [x.type, x.value]));
    const local = Date.UTC(
      Number(p.year),
      Number(p.month) - 1,
      Number(p.day),
      Number(p.hour),
      Number(p.minute),
      Number(p.second),
    );
    return local - Math.floor(utc / 1000) * 1000;
  }
}
