import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedStore } from '../server/store/embedded.js';
import { seedCatalog, seedKey } from './seed.js';

export interface LookupResult {
  catalogued: number;
  lookups: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * The dedup lookup (catalog.findByKey) against a catalog of `count` entries in the embedded
 * store.
 */
export async function benchLookup(count: number, lookups = 20000): Promise<LookupResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-lookup-'));
  try {
    const store = openEmbeddedStore({ dataDir, chunkSize: 255 * 1024 });
    await seedCatalog(dataDir, count);

    const times: number[] = [];
    for (let i = 0; i < lookups; i++) {
      // Half hits, half misses (new content), in random order.
      const key = i % 2 === 0 ? seedKey(Math.floor(Math.random() * count)) : seedKey(count + i);
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
