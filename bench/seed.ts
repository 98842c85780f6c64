import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ContentKey } from '../server/store/port.js';

/** A catalog entry's key for seed number i (deterministic, so lookups can aim at hits). */
export const seedKey = (i: number): ContentKey => ({
  md5: createHash('md5').update(`file ${i}`).digest('hex'),
  sha256: createHash('sha256').update(`file ${i}`).digest('hex'),
  length: 1000 + (i % 100000),
});

/**
 * Fills an embedded store's catalog with `count` entries in one SQL transaction. Only for
 * benchmarks: seeding speed is not what they measure, and these entries have no bytes.
 */
export function seedCatalog(dataDir: string, count: number): void {
  const db = new Database(path.join(dataDir, 'archive.sqlite'));
  const insert = db.prepare(
    `INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date)
     VALUES (?, ?, ?, ?, 261120, 1, 'seed.pdf', 'application/pdf', ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const k = seedKey(i);
      insert.run(randomBytes(12).toString('hex'), k.md5, k.sha256, k.length, Date.now());
    }
  })();
  db.close();
}
