import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import { monthOf, nextDay, weekOf } from '../../shared/calendar.js';

describe('the report calendar', () => {
  const beijing = new ReportCalendar('Asia/Shanghai');

  it('counts an upload on its local day, not UTC’s', () => {
    assert.equal(beijing.dayOf(new Date('2026-03-02T15:59:59Z')), '2026-03-02');
    assert.equal(beijing.dayOf(new Date('2026-03-02T16:00:00Z')), '2026-03-03');
  });

  it('starts and ends a day at local midnight', () => {
    assert.equal(beijing.startOf('2026-03-03').toISOString(), '2026-03-02T16:00:00.000Z');
    assert.equal(beijing.endOf('2026-03-03').toISOString(), '2026-03-03T16:00:00.000Z');
    assert.equal(beijing.endOf('2026-12-31').toISOString(), '2026-12-31T16:00:00.000Z');
  });

  it('follows daylight saving time where the zone has it', () => {
    const berlin = new ReportCalendar('Europe/Berlin');
    // Clocks go forward on 2026-03-29: that day has 23 hours.
    assert.equal(berlin.startOf('2026-03-29').toISOString(), '2026-03-28T23:00:00.000Z');
    assert.equal(berlin.endOf('2026-03-29').toISOString(), '2026-03-29T22:00:00.000Z');
    assert.equal(berlin.dayOf(new Date('2026-03-29T21:59:59Z')), '2026-03-29');
  });

  it('starts a day at its first hour where clocks jump forward at midnight', () => {
    // Chile: 2026-09-06 00:00 local does not exist; the day begins at 01:00 (-03:00).
    const santiago = new ReportCalendar('America/Santiago');
    assert.equal(santiago.startOf('2026-09-06').toISOString(), '2026-09-06T04:00:00.000Z');
    assert.equal(santiago.endOf('2026-09-05').toISOString(), '2026-09-06T04:00:00.000Z', 'days never overlap');
  });

  it('names weeks by their Monday and months as YYYY-MM', () => {
    assert.equal(weekOf('2026-03-02'), '2026-03-02', 'a Monday');
    assert.equal(weekOf('2026-03-08'), '2026-03-02', 'a Sunday belongs to the week before');
    assert.equal(weekOf('2026-02-01'), '2026-01-26');
    assert.equal(weekOf('2027-01-01'), '2026-12-28', 'across a year end');
    assert.equal(monthOf('2026-04-30'), '2026-04');
    assert.equal(nextDay('2028-02-28'), '2028-02-29');
  });

  it('refuses a time zone it does not know', () => {
    assert.throws(() => new ReportCalendar('Mars/Olympus_Mons'), RangeError);
  });
});
