import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openEmbeddedStore } from '../server/store/embedded/index.js';
import type { ContentKey } from '../server/store/port.js';

export interface LookupResult {
  catalogued: number;
  lookups: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

const keyFor = (i: number): ContentKey => ({
  md5: createHash('md5').update(`file ${i}`).digest('hex'),
  sha256: createHash('sha256').update(`file ${i}`).digest('hex'),
  length: 1000 + (i % 100000),
});

/**
 * The dedup lookup (catalog.findByKey) against a catalog of `count` entries in the embedded
 * store. The catalog is seeded with one bulk SQL insert: seeding speed is not what we measure.
 */
export async function benchLookup(count: number, lookups = 20000): Promise<LookupResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-lookup-'));
  try {
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    const db = new Database(path.join(dataDir, 'archive.sqlite'));
    const insert = db.prepare(
      `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date)
       VALUES (?, ?, ?, ?, 261120, 1, 'seed.pdf', 'application/pdf', ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < count; i++) {
        const k = keyFor(i);
        insert.run(randomBytes(12).toString('hex'), k.md5, k.sha256, k.length, Date.now());
      }
    })();
    db.close();

    const times: number[] = [];
    for (let i = 0; i < lookups; i++) {
      // Half hits, half misses (new content), in random order.
      const key = i % 2 === 0 ? keyFor(Math.floor(Math.random() * count)) : keyFor(count + i);
      const t = process.hrtime.bigint();
      const found = await store.catalog.findByKey(key);
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
      if ((found !== undefined) !== (i % 2 === 0)) throw new Error('lookup answered wrongly');
    }
    await store.close();
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
    return { catalogued: count, lookups, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: times[times.length - 1]! };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
