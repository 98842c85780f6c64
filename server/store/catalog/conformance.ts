import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collisionsQuery } from '../../../shared/reports.js';
import type { ArchiveStore } from '../archive-store.js';
import type { ContentKey } from './port.js';
import { commitBytes, keyOf, MD5_COLLISION, randomContent, stageBytes } from '../../../test/support/content.js';
import { seedingOf, type SeededCatalogEntry } from '../../../test/support/seeding.js';
import { ReportCalendar, ReportService } from '../../../test/support/services.js';
import { conformanceSuite, useFreshStore, type OpenedStore, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's catalog must do (run against each adapter by test/store/). */
export function catalogConformance(target: StoreTarget): void {
  conformanceSuite('catalog', target, (store) => {
    describe('catalog scan', () => {
      it('walks every entry in file id order, a page at a time, and counts them', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push((await commitBytes(store, randomContent(100 + i))).entry.fileId);
        assert.equal(await store.catalog.count(), 5);
        const seen: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await store.catalog.scan(after, 2);
          if (page.length === 0) break;
          assert.ok(page.length <= 2);
          seen.push(...page.map((e) => e.fileId));
          after = page.at(-1)!.fileId;
        }
        assert.deepEqual(seen, [...ids].sort());
      });
    });
  });
}

/**
 * The catalog's seeding (seeding.ts), what the benchmarks fill a store's catalog with: contents
 * seeded into one store and committed with their bytes into another of the same adapter are
 * catalogued alike (run against each adapter by test/store/).
 */
export function catalogSeedingConformance(target: StoreTarget): void {
  describe(`catalog seeding conformance: ${target.name}`, { skip: target.skip }, () => {
    let committed: OpenedStore;
    let seeded: OpenedStore;
    useFreshStore(target, (opened) => (committed = opened));
    useFreshStore(target, (opened) => (seeded = opened));

    /** What a store answers of these files: each entry by id and by key, the scan, the count, the collisions report. */
    const observe = async (store: ArchiveStore, keys: ContentKey[], ids: string[]) => ({
      byId: await Promise.all(ids.map((id) => store.catalog.get(id))),
      byKey: await Promise.all(keys.map((key) => store.catalog.findByKey(key))),
      scan: await store.catalog.scan(undefined, 100),
      count: await store.catalog.count(),
      collisions: await new ReportService(store.reports, new ReportCalendar('UTC'), store.accounts).collisions(
        collisionsQuery.parse({}),
      ),
    });

    it('catalogues each content as the commit of its bytes does: chunks, dates, MD5 collisions', async () => {
      const contents = [randomContent(10), randomContent(3 * committed.chunkSize + 1), ...MD5_COLLISION];
      const entries: SeededCatalogEntry[] = [];
      for (const [i, data] of contents.entries()) {
        const staged = await stageBytes(committed.store, data);
        const outcome = await committed.store.content.commit(staged.stagingId, {
          key: staged.key,
          fileName: `文件${i}.pdf`,
          contentType: 'application/pdf',
          uploadDate: new Date(Date.UTC(2026, 2, 1 + i)),
        });
        const { fileId, fileName, contentType, uploadDate } = outcome.entry;
        entries.push({ fileId, key: staged.key, fileName, contentType, uploadDate });
      }
      const seeding = await seedingOf(seeded);
      try {
        assert.equal(await seeding.catalog.seed(entries), contents.length);
      } finally {
        await seeding.close();
      }
      const keys = contents.map(keyOf);
      const ids = entries.map((e) => e.fileId);
      const seen = await observe(seeded.store, keys, ids);
      assert.deepEqual(seen, await observe(committed.store, keys, ids));
      assert.deepEqual(
        seen.byId.map((e) => [e?.chunkCount, e?.md5Collision]),
        [
          [1, false],
          [4, false],
          [1, true],
          [1, true],
        ],
      );
    });
  });
}
