import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { backupEmbedded } from '../server/store/embedded/backup.js';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { seconds } from './files.js';

export interface SmallContentsResult {
  /** files: one content file each (staged, written, committed: the per-file path); packs: storeMany (batch uploads, the importer). */
  layout: 'files' | 'packs';
  contents: number;
  bytesEach: number;
  /** Storing them through the store, in batches of 1,000. */
  storeSeconds: number;
  /** Inodes the content folder uses (files and folders), and its folders. */
  inodes: number;
  folders: number;
  /** The most files in one folder. */
  largestFolder: number;
  /** Disk the content folder takes (du), and the bytes it holds. */
  diskBytes: number;
  contentBytes: number;
  /** `tar` of the content folder to /dev/null (the reference: what reading every file costs). */
  tarSeconds: number;
  /** `archive backup` into an empty folder, then again with nothing new. */
  backupSeconds: number;
  backupAgainSeconds: number;
}

/**
 * What many small contents cost the embedded store (issue "A folder of ten thousand scanned
 * pages"), in either layout: inodes, folder sizes, disk, storing, and the time a backup takes,
 * against reading the same files with tar.
 */
export async function benchSmallContents(
  count: number,
  bytesEach: number,
  layout: SmallContentsResult['layout'],
): Promise<SmallContentsResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-small-'));
  const dataDir = path.join(root, 'data');
  try {
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    const seed = randomBytes(bytesEach);
    const started = performance.now();
    const now = new Date();
    for (let done = 0; done < count;) {
      const batch = Math.min(1000, count - done);
      const contents = [];
      for (let i = 0; i < batch; i++) {
        // Distinct contents: the seed with the content's number in front.
        const bytes = Buffer.from(seed);
        bytes.writeUInt32BE(done + i, 0);
        const md5 = createHash('md5').update(bytes).digest('hex');
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        contents.push({
          parts: [bytes],
          entry: {
            key: { md5, sha256, length: bytes.length },
            fileName: `第${done + i}页.jpg`,
            contentType: 'image/jpeg',
            uploadDate: now,
          },
        });
      }
      if (layout === 'packs') await store.content.storeMany(contents);
      else {
        const items = [];
        for (const { parts, entry } of contents) {
          const stagingId = await store.content.stage(now);
          await store.content.write(stagingId, 0, parts);
          items.push({ stagingId, entry });
        }
        await store.content.commitMany(items);
      }
      done += batch;
      if (done % 100_000 === 0) process.stderr.write(`  ${done} contents stored (${layout})\n`);
    }
    const storeSeconds = (performance.now() - started) / 1000;
    await store.close();

    const content = path.join(dataDir, 'content');
    const count1 = (args: string[]) =>
      Number(execFileSync('sh', ['-c', `find "$1" ${args.join(' ')} | wc -l`, 'sh', content], { encoding: 'utf8' }));
    const folders = count1(['-type', 'd']);
    const inodes = count1([]);
    const largestFolder = Number(
      execFileSync(
        'sh',
        [
          '-c',
          'find "$1" -type f -printf "%h\\n" | sort | uniq -c | sort -rn | head -1 | awk "{print \\$1}"',
          'sh',
          content,
        ],
        { encoding: 'utf8' },
      ),
    );
    const diskBytes = Number(execFileSync('du', ['-s', '-B1', content], { encoding: 'utf8' }).split('\t')[0]);
    // Through cat: GNU tar reads no file when its archive is /dev/null itself.
    const tar = () => execFileSync('sh', ['-c', 'tar -cf - -C "$1" . | cat > /dev/null', 'sh', content]);
    const tarSeconds = seconds(tar);
    const target = path.join(root, 'backup');
    const backupSeconds = await timed(() => backupEmbedded(dataDir, target));
    const backupAgainSeconds = await timed(() => backupEmbedded(dataDir, target));
    return {
      layout,
      contents: count,
      bytesEach,
      storeSeconds,
      inodes,
      folders,
      largestFolder,
      diskBytes,
      contentBytes: count * bytesEach,
      tarSeconds,
      backupSeconds,
      backupAgainSeconds,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return (performance.now() - start) / 1000;
}
