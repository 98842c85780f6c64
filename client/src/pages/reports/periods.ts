export const PERIODS = ['thisMonth', 'lastMonth', 'thisQuarter', 'thisYear', 'lastYear'] as const;
export type Period = (typeof PERIODS)[number];

const day = (y: number, m: number, d: number) => {
  // Date.UTC rolls over (month 12 → January next year, day 0 → the month before's last day).
  const at = new Date(Date.UTC(y, m, d));
  return at.toISOString().slice(0, 10);
};

/**
 * A period's first and last day (both included, as every date range of the app), from the
 * clerk's today: the current ones end today, the past ones at their own end.
 */
export function periodDays(period: Period, today: Date): { from: string; to: string } {
  const y = today.getFullYear();
  const m = today.getMonth();
  const now = day(y, m, today.getDate());
  switch (period) {
    case 'thisMonth':
      return { from: day(y, m, 1), to: now };
    case 'lastMonth':
      return { from: day(y, m - 1, 1), to: day(y, m, 0) };
    case 'thisQuarter':
      return { from: day(y, m - (m % 3), 1), to: now };
    case 'thisYear':
      return { from: day(y, 0, 1), to: now };
    case 'lastYear':
      return { from: day(y - 1, 0, 1), to: day(y - 1, 11, 31) };
  }
}
