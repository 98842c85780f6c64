import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packsFolder } from '../server/store/content/packs.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { seconds } from './files.js';

export interface CompactionRound {
  /** `cp` of the pack file (the reference), and `cp` then `sync` of the copy. */
  cpSeconds: number;
  cpSyncSeconds: number;
  /** The store's compaction of the same pack, in a process of its own. */
  compactSeconds: number;
  /** That process's peak RSS (VmHWM), the store's opening included. */
  peakRssMb: number;
  reclaimedBytes: number;
}

export interface CompactionResult {
  packBytes: number;
  liveBytes: number;
  contents: number;
  rounds: CompactionRound[];
}

/**
 * Compaction of one pack of `sizeMiB` that is half dead (issue 41: target at most twice the time
 * of copying the pack with `cp`, measured in the same run). The pack is made as batch uploads make
 * it: contents of 16-256 KiB, each batch half new contents and half duplicates of the batch
 * before (appended, never located), so live and dead bytes alternate all through it. Each round
 * starts from a copy of that data directory, runs `cp` of the pack, then the compaction.
 */
export async function benchCompaction(sizeMiB: number, rounds = 2): Promise<CompactionResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-compaction-'));
  const pristine = path.join(root, 'pristine');
  const work = path.join(root, 'work');
  try {
    const { packBytes, liveBytes, contents } = await halfDeadPack(pristine, sizeMiB * 1024 * 1024);
    const results: CompactionRound[] = [];
    for (let round = 0; round < rounds; round++) {
      fs.rmSync(work, { recursive: true, force: true });
      execFileSync('cp', ['-a', pristine, work]);
      const [pack] = fs.readdirSync(packsFolder(work));
      const file = path.join(packsFolder(work), pack!);
      const copy = path.join(root, 'copy.pack');
      execFileSync('sync');
      const cpSeconds = seconds(() => execFileSync('cp', [file, copy]));
      fs.rmSync(copy);
      execFileSync('sync');
      const cpSyncSeconds = seconds(() => execFileSync('sh', ['-c', 'cp "$1" "$2" && sync "$2"', 'sh', file, copy]));
      fs.rmSync(copy);
      execFileSync('sync');
      const measured = JSON.parse(
        execFileSync(process.execPath, ['--input-type=module', '-e', compactScript(work)], { encoding: 'utf8' }),
      ) as { seconds: number; reclaimedBytes: number; peakRssMb: number };
      if (fs.readdirSync(packsFolder(work)).length !== 1) throw new Error('compaction left more than one pack');
      results.push({
        cpSeconds,
        cpSyncSeconds,
        compactSeconds: measured.seconds,
        peakRssMb: measured.peakRssMb,
        reclaimedBytes: measured.reclaimedBytes,
      });
    }
    return { packBytes, liveBytes, contents, rounds: results };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** The child that compacts: the store opened by another process than the one that wrote the pack. */
function compactScript(dataDir: string): string {
  const storeModule = new URL('../server/store/embedded.js', import.meta.url).href;
  return `
    import fs from 'node:fs';
    import { openEmbeddedStore } from ${JSON.stringify(storeModule)};
    const store = openEmbeddedStore({ dataDir: ${JSON.stringify(dataDir)}, chunkSize: 255 * 1024 });
    const started = performance.now();
    const report = await store.content.compact(new Date(Date.now() + 3600_000));
    const seconds = (performance.now() - started) / 1000;
    await store.close();
    const peakRssMb = Number(/VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
    process.stdout.write(JSON.stringify({ seconds, reclaimedBytes: report.reclaimedBytes, peakRssMb }));
  `;
}

/** A data directory with one pack of about `bytes`, half of it duplicates nothing locates. */
async function halfDeadPack(
  dataDir: string,
  bytes: number,
): Promise<{ packBytes: number; liveBytes: number; contents: number }> {
  const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
  const seed = randomBytes(256 * 1024);
  const now = new Date();
  let liveBytes = 0;
  let contents = 0;
  let previous: Buffer[] = [];
  const item = (data: Buffer) => ({
    parts: [data],
    entry: {
      key: {
        md5: createHash('md5').update(data).digest('hex'),
        sha256: createHash('sha256').update(data).digest('hex'),
        length: data.length,
      },
      fileName: `第${contents}页.jpg`,
      contentType: 'image/jpeg',
      uploadDate: now,
    },
  });
  // 16 MiB of new contents a batch, interleaved with duplicates of the batch before (all of it
  // appended, the duplicates never located); at the end, the last batch's duplicates alone: every
  // content is in the pack twice, once live.
  while (liveBytes + 16 <= bytes / 2) {
    const fresh: Buffer[] = [];
    for (let batchBytes = 0; batchBytes < 16 * 1024 * 1024;) {
      // The last one cut to fit: the pack ends at `bytes` exactly (a pack takes up to 1 GiB).
      const length = Math.min(16 * 1024 + Math.floor(Math.random() * 240 * 1024), bytes / 2 - liveBytes - batchBytes);
      if (length < 16) break;
      const data = Buffer.from(seed.subarray(0, length));
      data.writeUInt32BE(contents++, 0);
      fresh.push(data);
      batchBytes += length;
    }
    const batch = [];
    for (let k = 0; k < Math.max(fresh.length, previous.length); k++) {
      if (fresh[k]) batch.push(fresh[k]!);
      if (previous[k]) batch.push(previous[k]!);
    }
    await store.content.storeMany(batch.map(item));
    for (const data of fresh) liveBytes += data.length;
    previous = fresh;
  }
  await store.content.storeMany(previous.map(item));
  await store.close();
  const [pack] = fs.readdirSync(packsFolder(dataDir));
  return { packBytes: fs.statSync(path.join(packsFolder(dataDir), pack!)).size, liveBytes, contents };
}
