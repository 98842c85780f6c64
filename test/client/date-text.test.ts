import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addDays,
  addMonths,
  dayText,
  monthWeeks,
  parseDay,
  parseTime,
  weekday,
} from '../../client/src/pages/date-text.js';

describe('date fields: days written in the page’s language, read back as YYYY-MM-DD', () => {
  it('writes a day as the page’s language does', () => {
    assert.equal(dayText('zh-CN', '2026-11-27'), '2026年11月27日');
    assert.equal(dayText('zh-CN', '2026-03-01'), '2026年3月1日');
    assert.equal(dayText('en', '2026-03-01'), '2026-03-01');
  });

  it('reads what a clerk types: ISO days, Chinese days, full-width digits, one-digit months and days', () => {
    for (const typed of [
      '2026-11-27',
      '2026/11/27',
      '2026.11.27',
      '20261127',
      ' 2026年11月27日 ',
      '2026 年 11 月 27 日',
    ])
      assert.equal(parseDay(typed), '2026-11-27', typed);
    assert.equal(parseDay('２０２６年３月１日'), '2026-03-01', 'full-width, as a Chinese input method types');
    assert.equal(parseDay('2026-3-1'), '2026-03-01');
    assert.equal(parseDay('2026年3月1'), '2026-03-01');
    for (const written of ['2026-11-27', '2026-03-01'])
      for (const language of ['zh-CN', 'en']) assert.equal(parseDay(dayText(language, written)), written);
  });

  it('tells an empty field from a wrong one, and refuses days that do not exist', () => {
    assert.equal(parseDay(''), null);
    assert.equal(parseDay('   '), null);
    for (const wrong of [
      '2026-02-30',
      '2025-02-29',
      '2026-13-01',
      '2026-00-10',
      '11/27/2026',
      '27.11.2026',
      '明天',
      '2026-11',
    ])
      assert.equal(parseDay(wrong), undefined, wrong);
    assert.equal(parseDay('2028-02-29'), '2028-02-29', 'a leap day');
  });

  it('reads a day typed without its year as one of the current year', () => {
    for (const typed of ['11月28日', '11月28', '11-28', '11/28', '11.28', ' １１月２８日 ', '11 月 28 日'])
      assert.equal(parseDay(typed, '2026-03-05'), '2026-11-28', typed);
    assert.equal(parseDay('2月29日', '2028-01-10'), '2028-02-29', 'a leap day of a leap year');
    assert.equal(parseDay('2月29日', '2026-01-10'), undefined, 'no leap day this year');
    assert.equal(parseDay('13月1日', '2026-01-10'), undefined);
    assert.equal(parseDay('11月28日'), `${new Date().getFullYear()}-11-28`, 'the year of the clock by default');
  });

  it('reads a 24-hour time', () => {
    assert.equal(parseTime('9:05'), '09:05');
    assert.equal(parseTime('09:05'), '09:05');
    assert.equal(parseTime('０９：０５'), '09:05');
    assert.equal(parseTime('0905'), '09:05');
    assert.equal(parseTime('9时5分'), '09:05');
    assert.equal(parseTime('23:59'), '23:59');
    assert.equal(parseTime(''), null);
    for (const wrong of ['24:00', '9:60', '9', '9:5:0', 'noon']) assert.equal(parseTime(wrong), undefined, wrong);
  });

  it('moves through the calendar by days and months, the short months and the turn of the year included', () => {
    assert.equal(addDays('2026-12-31', 1), '2027-01-01');
    assert.equal(addDays('2026-03-01', -1), '2026-02-28');
    assert.equal(addMonths('2026-03-31', -1), '2026-02-28');
    assert.equal(addMonths('2028-03-31', -1), '2028-02-29');
    assert.equal(addMonths('2026-01-31', 1), '2026-02-28');
    assert.equal(addMonths('2026-12-15', 1), '2027-01-15');
    assert.equal(addMonths('2026-11-27', -12), '2025-11-27');
  });

  it('lays a month out in whole weeks from Monday', () => {
    assert.equal(weekday('2026-11-23'), 0, 'a Monday');
    assert.equal(weekday('2026-11-29'), 6, 'a Sunday');
    const november = monthWeeks('2026-11');
    // 1 November 2026 is a Sunday: the first week starts on Monday 26 October.
    assert.deepEqual(november[0], [
      '2026-10-26',
      '2026-10-27',
      '2026-10-28',
      '2026-10-29',
      '2026-10-30',
      '2026-10-31',
      '2026-11-01',
    ]);
    assert.equal(november.at(-1)![0], '2026-11-30');
    assert.equal(november.length, 6);
    assert.ok(november.every((week) => week.length === 7));
    assert.equal(monthWeeks('2027-02').length, 4, 'February 2027 starts on a Monday and has four weeks');
  });
});
