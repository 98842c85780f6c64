import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { makeFile, postFileWithCurl, seconds } from './files.js';
import { benchToken, startBenchServer } from './server.js';

export interface IngestResult {
  sizeMiB: number;
  md5sumSeconds: number;
  ingestSeconds: number;
  ratio: number;
  serverPeakRssMb: number;
}

/**
 * POST /api/files of one large file over loopback into the embedded store, against md5sum of
 * the same (cached) file: the server must at least hash every byte, so md5sum is the floor.
 */
export async function benchIngest(sizeMiB: number): Promise<IngestResult> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-'));
  const dataDir = path.join(work, 'data');
  const file = path.join(work, 'input.bin');
  const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
  try {
    await makeFile(file, sizeMiB * 1024 * 1024);
    execFileSync('md5sum', [file]); // warm the page cache for both contenders
    const md5sumSeconds = Math.min(...[0, 1].map(() => seconds(() => execFileSync('md5sum', [file]))));

    const token = benchToken(env);
    const server = await startBenchServer(env);
    try {
      // Best of two, like md5sum: this shared machine's timings vary from run to run. The second
      // upload is a duplicate, which does the same work (every byte received, written and hashed).
      const runs: number[] = [];
      for (const expected of ['201', '200']) {
        let status = '';
        runs.push(
          seconds(() => {
            status = postFileWithCurl(server.url, token, file);
          }),
        );
        if (status !== expected) throw new Error(`upload answered ${status}, not ${expected}`);
      }
      const ingestSeconds = Math.min(...runs);
      await delay(100);
      const serverPeakRssMb = server.peakRssMb();
      return { sizeMiB, md5sumSeconds, ingestSeconds, ratio: ingestSeconds / md5sumSeconds, serverPeakRssMb };
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
