import fs from 'node:fs';
import type { BenchServer } from './server.js';

/**
 * Every report's export as an administrator downloads it (issue 43: "every row, streamed"), each
 * group of the grouped ones, the readable (zh-CN) cross-unit one, the near-duplicate pairs and the
 * audit log: the paths the scale run exports.
 */
export const EXPORT_PATHS: readonly string[] = [
  '/api/reports/repeat-uploaders?format=csv',
  '/api/reports/repeat-uploaders?format=csv&group=user',
  '/api/reports/repeat-uploaders?format=csv&group=unit',
  '/api/reports/cross-unit?format=csv',
  '/api/reports/cross-unit?format=csv&lang=zh-CN',
  '/api/reports/savings?format=csv&group=unit',
  '/api/reports/savings?format=csv&group=day',
  '/api/reports/savings?format=csv&group=week',
  '/api/reports/savings?format=csv&group=month',
  '/api/reports/collisions?format=csv',
  '/api/reports/near-duplicates?format=csv',
  '/api/audit?format=csv',
];

export interface ExportRun {
  path: string;
  seconds: number;
  /** Rows the server said it would send (X-Total-Count). */
  total: number;
  /** Rows received: CSV records after the header (line ends outside quotes). */
  rows: number;
  bytes: number;
  /** The server's RSS high-water mark during this export alone (reset just before it). */
  peakRssMb: number;
  /** The server's RSS when the export began. */
  startRssMb: number;
}

/**
 * One export, its body read as it comes (never held whole) and its records counted, with the
 * server's peak RSS during it: the kernel's high-water mark of the process (VmHWM) is reset
 * (`clear_refs` 5) just before the request, so it is this export's peak, not an earlier one's.
 */
export async function timeExport(server: BenchServer, cookie: string, path: string): Promise<ExportRun> {
  fs.writeFileSync(`/proc/${server.process.pid}/clear_refs`, '5');
  const startRssMb = server.rssMb();
  const start = performance.now();
  const res = await fetch(`${server.url}${path}`, { headers: { cookie } });
  if (res.status !== 200 || !res.body) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  let records = 0;
  let bytes = 0;
  let quoted = false;
  for await (const piece of res.body as AsyncIterable<Uint8Array>) {
    bytes += piece.length;
    for (let i = 0; i < piece.length; i++) {
      const b = piece[i]!;
      // A doubled quote inside a quoted cell toggles twice: still quoted.
      if (b === 0x22) quoted = !quoted;
      else if (b === 0x0a && !quoted) records++;
    }
  }
  return {
    path,
    seconds: (performance.now() - start) / 1000,
    total: Number(res.headers.get('x-total-count')),
    rows: records - 1,
    bytes,
    peakRssMb: server.peakRssMb(),
    startRssMb,
  };
}
