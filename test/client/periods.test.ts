import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { periodDays } from '../../client/src/pages/reports/periods.js';

describe('quick periods of the reports: first and last day, both included', () => {
  const on = (iso: string) => new Date(`${iso}T10:00:00`);

  it('runs the current month, quarter and year up to today', () => {
    assert.deepEqual(periodDays('thisMonth', on('2026-11-27')), { from: '2026-11-01', to: '2026-11-27' });
    assert.deepEqual(periodDays('thisQuarter', on('2026-11-27')), { from: '2026-10-01', to: '2026-11-27' });
    assert.deepEqual(periodDays('thisQuarter', on('2026-03-31')), { from: '2026-01-01', to: '2026-03-31' });
    assert.deepEqual(periodDays('thisYear', on('2026-11-27')), { from: '2026-01-01', to: '2026-11-27' });
  });

  it('gives last month and last year whole, across the turn of the year and in a leap year', () => {
    assert.deepEqual(periodDays('lastMonth', on('2026-01-15')), { from: '2025-12-01', to: '2025-12-31' });
    assert.deepEqual(periodDays('lastMonth', on('2028-03-01')), { from: '2028-02-01', to: '2028-02-29' });
    assert.deepEqual(periodDays('lastYear', on('2026-01-01')), { from: '2025-01-01', to: '2025-12-31' });
  });
});
