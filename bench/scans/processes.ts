import fs from 'node:fs';

/** /proc/PID/status, or '' for a process gone. */
export const status = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
};

/** A field of /proc/PID/status in kB (VmRSS, VmHWM, …). */
export const kb = (text: string, field: string): number =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0);

/** User and system CPU seconds of a process (all its threads), from /proc/PID/stat. */
export const cpuSeconds = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // clock ticks (USER_HZ 100)
};

/** The processes whose parent is `pid` (the server's reading process). */
export const childrenOf = (pid: number): number[] =>
  fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => Number(/PPid:\s+(\d+)/.exec(status(Number(d)))?.[1]) === pid)
    .map(Number);
