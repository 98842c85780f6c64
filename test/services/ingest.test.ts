import { ReportCalendar } from '../../server/services/calendar.js';
import { AuditService } from '../../server/services/audit.js';
import { ChunkPool } from '../../server/threads/chunk-writer.js';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PayloadTooLargeError } from '../../server/errors.js';
import { DigestPool } from '../../server/threads/digest.js';
import { IngestService } from '../../server/services/ingest.js';
import { DuplicateScope } from '../../server/services/scope.js';
import { keyOf, randomContent, readAll, testAccount } from '../support/content.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import { ReportService } from '../../server/services/reports.js';
import { savingsQuery } from '../../shared/reports.js';
import { countChunks, embeddedTarget, TEST_CHUNK_SIZE, type OpenedStore } from '../support/stores.js';

const CS = TEST_CHUNK_SIZE;

/** Splits data into pieces of awkward sizes, as a network delivers it. */
function* pieces(data: Buffer, size: number): Generator<Buffer> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}

describe('ingest: one pass of chunking, MD5 and SHA-256', () => {
  let opened: OpenedStore;
  let digests: DigestPool;
  let ingest: IngestService;
  before(async () => {
    opened = await embeddedTarget.open();
    digests = new DigestPool(2);
    ingest = new IngestService({
      store: opened.store,
      digests,
      pool: new ChunkPool(CS),
      scope: new DuplicateScope('archive', opened.store.ledger),
      maxFileSize: 40 * CS,
      audit: new AuditService(opened.store.audit, opened.store.accounts),
      calendar: new ReportCalendar('Asia/Shanghai'),
      meter: { counted() {} },
    });
  });
  after(async () => {
    await digests.close();
    await opened.dispose();
  });

  for (const size of [0, 1, CS - 1, CS, CS + 1, 16 * CS, 16 * CS + 1, 33 * CS + 12345]) {
    it(`hashes and chunks ${size} bytes exactly like Node's crypto`, async () => {
      const data = randomContent(size);
      const staged = await ingest.stage(Readable.from(pieces(data, 7001)));
      assert.deepEqual(staged.key, keyOf(data));
      const { entry } = await opened.store.content.commit(staged.stagingId, {
        key: staged.key,
        fileName: 'x',
        contentType: 'x/y',
        uploadDate: new Date(),
      });
      assert.deepEqual(await readAll(opened.store.content.read(entry)), data);
    });
  }

  it('hashes several files at once without mixing them up', async () => {
    const files = Array.from({ length: 6 }, (_, i) => randomContent(3 * CS + i * 1000));
    const staged = await Promise.all(files.map((f) => ingest.stage(Readable.from(pieces(f, 4096)))));
    staged.forEach((s, i) => assert.deepEqual(s.key, keyOf(files[i]!)));
    await Promise.all(staged.map((s) => ingest.discard(s)));
  });

  it('stops at the maximum size and leaves no chunks behind', async () => {
    const before = await countChunks(opened);
    await assert.rejects(ingest.stage(Readable.from(pieces(randomContent(40 * CS + 1), 65536))), PayloadTooLargeError);
    assert.equal(await countChunks(opened), before);
  });

  it('removes staged chunks when the source fails mid-stream', async () => {
    const before = await countChunks(opened);
    async function* failing() {
      yield* pieces(randomContent(20 * CS), 65536);
      throw new Error('connection reset');
    }
    await assert.rejects(ingest.stage(failing()), /connection reset/);
    assert.equal(await countChunks(opened), before);
  });
});

describe('ingest: two first uploads of one new file finishing together', () => {
  let opened: OpenedStore;
  let digests: DigestPool;
  after(async () => {
    await digests.close();
    await opened.dispose();
  });

  it('counts exactly one of them as storing the file, and the other as space saved', async () => {
    opened = await embeddedTarget.open();
    digests = new DigestPool(2);
    const { store } = opened;
    // Each upload reaches its count only once both have committed: the closest race there is.
    let arrived = 0;
    let bothArrived!: () => void;
    const gate = new Promise<void>((resolve) => (bothArrived = resolve));
    const ledger: Ledger = Object.create(store.ledger) as Ledger;
    ledger.count = async (action) => {
      if (++arrived === 2) bothArrived();
      await gate;
      return store.ledger.count(action);
    };
    const ingest = new IngestService({
      store: { ...store, ledger },
      digests,
      pool: new ChunkPool(CS),
      scope: new DuplicateScope('archive', store.ledger),
      maxFileSize: 40 * CS,
      audit: new AuditService(store.audit, store.accounts),
      calendar: new ReportCalendar('Asia/Shanghai'),
      meter: { counted() {} },
    });
    const data = randomContent(3 * CS);
    const upload = async (username: string, key: string) => {
      const staged = await ingest.stage(Readable.from(pieces(data, 4096)));
      const uploader = testAccount({ username });
      return ingest.commit(
        staged,
        { uploader, fileName: 'a.pdf', path: 'a.pdf', contentType: 'application/pdf' },
        { via: 'tus', address: null, key },
      );
    };
    const answers = await Promise.all([upload('first', 'tus:1'), upload('second', 'tus:2')]);
    assert.equal(answers[0].fileId, answers[1].fileId);
    const summary = (
      await new ReportService(store.reports, new ReportCalendar('Asia/Shanghai'), store.accounts).savings(
        savingsQuery.parse({}),
      )
    ).summary;
    assert.deepEqual([summary.uploads, summary.savedUploads], [2, 1]);
    const details = (await store.audit.search({ limit: 10, offset: 0 })).items.map((e) => e.detail).sort();
    assert.deepEqual(details, ['tus: duplicate', 'tus: stored']);
  });
});
