import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/** A file of random bytes (incompressible, unlike anything a cache could shortcut). */
export async function makeFile(file: string, bytes: number): Promise<void> {
  const fd = fs.openSync(file, 'w');
  const block = 8 * 1024 * 1024;
  try {
    for (let written = 0; written < bytes; written += block)
      fs.writeSync(fd, randomBytes(Math.min(block, bytes - written)));
  } finally {
    fs.closeSync(fd);
  }
}

/** Wall time of a synchronous step, in seconds. */
export function seconds(f: () => void): number {
  const t = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t) / 1e9;
}

/**
 * POST /api/files of a file on disk as a multipart form, by curl (a client apart from the
 * measuring process, streaming from the file); answers the HTTP status.
 */
export function postFileWithCurl(serverUrl: string, token: string, file: string): string {
  return execFileSync(
    'curl',
    [
      '-sS',
      '-o',
      '/dev/null',
      '-w',
      '%{http_code}',
      '-H',
      `Authorization: Bearer ${token}`,
      '-F',
      `file=@${file};type=application/octet-stream`,
      `${serverUrl}/api/files`,
    ],
    { encoding: 'utf8' },
  );
}
