/** Sizes as people read them, in 1024 steps: the pages and the exports for people. */
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/** The size unit that suits a largest value (1024 steps, as formatBytes), for chart axes: 0, 100, 200 KB rather than 97.7 KB steps. */
export function byteUnit(largest: number): { divisor: number; unit: string } {
  let unit = 0;
  while (largest >= 1024 ** (unit + 1) && unit < UNITS.length - 1) unit++;
  return { divisor: 1024 ** unit, unit: UNITS[unit]! };
}

/** 1024 steps with one decimal: 300.0 KB. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${UNITS[unit]}`;
}
