import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { seedCatalog, seedReportData } from '../bench/seed.js';
import { ReportCalendar } from '../server/services/calendar.js';
import { NearDuplicateService } from '../server/services/near-duplicates/detection.js';
import { Fingerprinter } from '../server/services/near-duplicates/fingerprint.js';
import { TextIndexing } from '../server/services/text-search.js';
import { openEmbeddedAt, tempDir } from './support/stores.js';

/**
 * Seeded files have no bytes: a server starting on a seeded archive must find nothing to
 * fingerprint or read, or it spends the benchmark failing every seeded file in the background.
 */
describe('a seeded archive gives a starting server nothing to fingerprint', () => {
  const queuedAtStart = async (dataDir: string) => {
    const store = openEmbeddedAt(dataDir);
    try {
      const detection = new NearDuplicateService({
        store,
        fingerprinter: Fingerprinter.onFirstUse(),
        calendar: new ReportCalendar('Asia/Shanghai'),
        holder: 'server',
      });
      const requeued = await detection.adoptSettings();
      const backfilled = await new TextIndexing({ store, holder: 'server' }).backfill();
      return { requeued, backfilled, ...(await store.fingerprintQueue.counts(new Date())) };
    } finally {
      await store.close();
    }
  };

  it('after seeding a catalog (the load, claims and lookup benchmarks)', async () => {
    const dir = tempDir();
    try {
      await seedCatalog(dir, 50);
      assert.deepEqual(await queuedAtStart(dir), { requeued: 0, backfilled: 0, queued: 0, running: 0, failed: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('after seeding uploads (the reports and the province-scale run)', async () => {
    const dir = tempDir();
    try {
      await seedReportData(dir, 500, 'Asia/Shanghai');
      assert.deepEqual(await queuedAtStart(dir), { requeued: 0, backfilled: 0, queued: 0, running: 0, failed: 0 });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
