import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ReportCalendar } from '../../server/services/calendar.js';
import { NearDuplicateService, type Pacing } from '../../server/services/near-duplicates/detection.js';
import { Fingerprinter } from '../../server/services/near-duplicates/fingerprint.js';
import { OCR_OFF, ProcessTextReader } from '../../server/services/near-duplicates/text-reader.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { NearFingerprint } from '../../server/store/near-duplicates/port.js';
import { keyOf, stageBytes } from '../support/content.js';
import { cannotPrintPages, scannedPage, scannedPdf, scannedTiff } from '../support/scans.js';
import { storeTargets, type OpenedStore } from '../support/stores.js';
import { NOTICE, OTHER_NOTICE, POEM } from '../support/texts.js';
import { movedRight, printFigure, rescanned } from '../support/figures.js';
import { DEFAULT_SETTINGS } from '../../server/services/near-duplicates/fingerprint.js';
import { pageHashDistance } from '../../server/services/near-duplicates/page-image.js';
import { nearDuplicateKind } from '../../shared/reports.js';

/** Two short pages of a multi-page scan, each its own text. */
const FIRST_PAGE = `第一页。${POEM}`;
const SECOND_PAGE = '第二页。春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。';

for (const target of storeTargets) {
  describe(
    `text recognised in scanned images (${target.name} store)`,
    { skip: target.skip ?? cannotPrintPages() },
    () => {
      let opened: OpenedStore;
      let store: ArchiveStore;
      let reader: ProcessTextReader;
      const now = Date.UTC(2026, 10, 29, 9);
      let later = 0; // milliseconds the service's clock is ahead of `now`
      beforeEach(async () => {
        opened = await target.open();
        store = opened.store;
        reader = new ProcessTextReader({ settings: {}, ocr: true, heapMb: 512 });
        later = 0;
      });
      afterEach(async () => {
        await reader.close();
        await opened.dispose();
      });

      const service = (pacing?: Partial<Pacing>) =>
        new NearDuplicateService({
          store,
          fingerprinter: Fingerprinter.onFirstUse(),
          calendar: new ReportCalendar('Asia/Shanghai'),
          holder: 'ocr-test',
          clock: () => new Date(now + later),
          reader,
          pacing,
        });
      const store_ = async (name: string, bytes: Uint8Array, contentType: string) => {
        const staged = await stageBytes(store, bytes);
        const { entry } = await store.content.commit(staged.stagingId, {
          key: keyOf(bytes),
          fileName: name,
          contentType,
          uploadDate: new Date(now),
        });
        return entry.fileId;
      };

      it('records a damaged image as having no text, with the reason, and goes on with the queue', async () => {
        const near = service();
        const page = await scannedPage(POEM, 'jpeg', 'slip');
        const ids = [
          await store_('截断的扫描件.jpg', page.subarray(0, page.byteLength >> 1), 'image/jpeg'),
          await store_('不是图片.png', Buffer.from('这不是图片'), 'image/png'),
          await store_('静夜思.txt', Buffer.from(POEM), 'text/plain'),
        ];
        await near.enqueue(ids);
        assert.equal(await near.runDue(), 3);
        const [truncated, notImage, poem] = await Promise.all(ids.map((id) => store.nearDuplicates.get(id)));
        assert.match(truncated!.skipped!, /^unreadable jpeg image/);
        assert.match(notImage!.skipped!, /^unreadable png image/);
        assert.equal(poem!.skipped, null);
        const status = await near.status();
        assert.deepEqual([status.fingerprinted, status.skipped, status.failed, status.queued], [1, 2, 0, 0]);
      });

      it(
        'reads a multi-page TIFF a page at a time, each page followed by a pause while files keep arriving, and at full speed once they stop',
        { timeout: 300_000 },
        async () => {
          // Virtual time for the pacing: each reading of the clock is 10 ms after the last.
          let t = 0;
          const pauses: number[] = [];
          let endPause!: () => void;
          let paused!: () => void;
          const pausing = new Promise<void>((resolve) => (paused = resolve));
          const near = service({
            busyShare: 0.2,
            quietMs: 2000,
            elapsed: () => (t += 10),
            sleep: (ms) => {
              pauses.push(ms);
              paused();
              return new Promise<void>((resolve) => (endPause = resolve));
            },
          });
          const tiff = await store_(
            '两页.tif',
            await scannedTiff([FIRST_PAGE, SECOND_PAGE, FIRST_PAGE], 'slip'),
            'image/tiff',
          );
          const text = await store_(
            '两页.txt',
            Buffer.from(`${FIRST_PAGE}\n${SECOND_PAGE}\n${FIRST_PAGE}`),
            'text/plain',
          );
          await near.enqueue([tiff]); // a file arriving: the first page is followed by a pause
          const round = near.runDue(1);
          await Promise.race([pausing, round.then(() => assert.fail('the image was read through without a pause'))]);
          assert.equal(pauses.length, 1);
          assert.ok(pauses[0]! > 0, 'paused four times as long as the page took');
          // While the pause lasts the image is not read on: its job is still in hand, with no fingerprint.
          assert.deepEqual(await store.fingerprintQueue.counts(new Date(now)), { queued: 0, running: 1, failed: 0 });
          assert.equal(await store.nearDuplicates.get(tiff), undefined);
          t += 5000; // no file since: the other pages are read without pauses
          endPause();
          assert.equal(await round, 1);
          assert.equal(pauses.length, 1, 'no pause once files stopped arriving');
          const fingerprint = await store.nearDuplicates.get(tiff);
          assert.deepEqual([fingerprint?.format, fingerprint?.skipped], ['tiff', null]);
          // Its text is all three pages': the text file with the same three pages is its pair.
          await near.enqueue([text]);
          t += 5000;
          assert.equal(await near.runDue(), 1);
          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.deepEqual(
            report.items.map((r) => [r.a.fileName, r.b.fileName].sort()),
            [['两页.tif', '两页.txt']],
          );
        },
      );

      it(
        'stops between two pages when the service stops: the job is left to its lease, not counted as failed',
        { timeout: 300_000 },
        async () => {
          let paused!: () => void;
          const pausing = new Promise<void>((resolve) => (paused = resolve));
          const near = service({
            quietMs: 3_600_000,
            sleep: (_ms, wake) => {
              paused();
              return new Promise<void>((resolve) => wake.addEventListener('abort', () => resolve()));
            },
          });
          const tiff = await store_('两页.tif', await scannedTiff([FIRST_PAGE, SECOND_PAGE], 'slip'), 'image/tiff');
          await near.enqueue([tiff]); // a file arriving: the first page is followed by a pause
          near.start(60_000);
          const read = (async () => {
            while ((await store.nearDuplicates.get(tiff)) === undefined) await new Promise((r) => setTimeout(r, 50));
          })();
          await Promise.race([pausing, read.then(() => assert.fail('the image was read through without a pause'))]);
          await near.stop();
          assert.deepEqual(await store.fingerprintQueue.counts(new Date(now)), { queued: 0, running: 1, failed: 0 });
          assert.equal(await store.nearDuplicates.get(tiff), undefined);
        },
      );

      it(
        'the reading process killed in the middle of an image (as the OOM killer does): the job fails with the reason and is retried, the service goes on',
        { timeout: 300_000 },
        async () => {
          let t = 0;
          let killed = false;
          const near = service({
            quietMs: 2000,
            elapsed: () => (t += 10),
            // After the first page, while files keep arriving: the kernel ends the reading process.
            sleep: async () => {
              process.kill(reader.pid!, 'SIGKILL');
              killed = true;
            },
          });
          const tiff = await store_('两页.tif', await scannedTiff([FIRST_PAGE, SECOND_PAGE], 'slip'), 'image/tiff');
          const poem = await store_('静夜思.txt', Buffer.from(POEM), 'text/plain');
          await near.enqueue([tiff, poem]);
          assert.equal(await near.runDue(), 2);
          assert.ok(killed, 'the process was killed between two pages');
          // The image's job failed and waits for its retry; the text after it was read all the same.
          assert.equal(await store.nearDuplicates.get(tiff), undefined);
          assert.equal((await store.nearDuplicates.get(poem))?.skipped, null);
          assert.deepEqual(await store.fingerprintQueue.counts(new Date(now)), { queued: 1, running: 0, failed: 0 });
          // A minute later (the first retry) a new reading process reads it through.
          later = 60_000;
          t += 5000; // no file since: no pause, no kill
          assert.equal(await near.runDue(), 1);
          const fingerprint = await store.nearDuplicates.get(tiff);
          assert.deepEqual([fingerprint?.format, fingerprint?.skipped], ['tiff', null]);
        },
      );

      it(
        'pairs two scans of one photograph as the same page scanned again, and neither a different photograph under the same caption nor two 红头文件 of one template',
        { timeout: 600_000 },
        async () => {
          const near = service();
          // Two photographs under the same caption: a few words agreeing do not make them one page.
          const photo = await printFigure({ kind: 'photo', seed: 7, caption: '图1 县档案馆新馆外景' });
          const other = await printFigure({ kind: 'photo', seed: 8, caption: '图1 县档案馆新馆外景' });
          // Two notices of one office: the same letterhead and layout (lines of the same lengths), different words.
          const notice = (n: number, text: string) =>
            scannedPage(
              [
                '某某县档案局文件',
                `某档发〔2023〕${n}号`,
                ...text
                  .split('\n')
                  .slice(0, 4)
                  .map((line, i) => line.slice(0, [18, 100, 100, 60][i])),
              ].join('\n'),
            );
          const ids = [
            await store_('档案馆外景.jpg', await rescanned(photo.png, 1, { dpi: 150, format: 'jpeg' }), 'image/jpeg'),
            await store_('外景（重扫）.tif', await rescanned(photo.png, 2, { dpi: 300, format: 'tiff' }), 'image/tiff'),
            await store_('另一张照片.jpg', await rescanned(other.png, 3, { dpi: 150, format: 'jpeg' }), 'image/jpeg'),
            await store_('移交通知.jpg', await notice(3, NOTICE), 'image/jpeg'),
            await store_('检查通知.jpg', await notice(4, OTHER_NOTICE), 'image/jpeg'),
          ];
          await near.enqueue(ids);
          while ((await near.runDue()) > 0);
          const got = async (id: string) => (await store.nearDuplicates.get(id))!;
          const [photoA, photoB, photoC, noticeA, noticeB] = [
            await got(ids[0]!),
            await got(ids[1]!),
            await got(ids[2]!),
            await got(ids[3]!),
            await got(ids[4]!),
          ];
          // Each page kept with its fingerprint and how much text it carries.
          for (const fp of [photoA, photoB, photoC, noticeA, noticeB]) assert.equal(fp.pages.length, 1);
          assert.ok(photoA.pages[0]!.units < DEFAULT_SETTINGS.imageMaxUnits, 'a caption is little text');
          assert.ok(noticeA.pages[0]!.units >= DEFAULT_SETTINGS.imageMaxUnits, 'a notice is much text');
          const distance = (a: NearFingerprint, b: NearFingerprint) =>
            pageHashDistance(a.pages[0]!.hash!, b.pages[0]!.hash!);
          assert.ok(distance(photoA, photoB) <= DEFAULT_SETTINGS.maxImageHamming);

          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.deepEqual(
            report.items.map((r) => [[r.a.fileName, r.b.fileName].sort(), r.method, nearDuplicateKind(r)]),
            [[['外景（重扫）.tif', '档案馆外景.jpg'], 'image', 'rescan']],
          );
          assert.equal(report.items[0]!.hamming, distance(photoA, photoB));
          // The same 标记为已处理 flow as any pair.
          const [fileA, fileB] = [ids[0]!, ids[1]!].sort();
          await store.nearDuplicates.review({
            fileA: fileA!,
            fileB: fileB!,
            at: new Date(now),
            userId: 'u1',
            userName: 'county',
            note: '同一张照片',
          });
          assert.equal((await near.report({ sort: 'foundAt', limit: 10, offset: 0 })).total, 0);
          assert.equal((await near.report({ sort: 'foundAt', limit: 10, offset: 0, status: 'reviewed' })).total, 1);
        },
      );

      it(
        'pairs a sheet carrying only a seal with its scan made again, and not with another sheet stamped with the same seal elsewhere',
        { timeout: 600_000 },
        async () => {
          const near = service();
          const { png } = await printFigure({ kind: 'seal', seed: 31 });
          const sealed = await store_(
            '盖章页.jpg',
            await rescanned(png, 1, { dpi: 150, format: 'jpeg' }),
            'image/jpeg',
          );
          await near.enqueue([sealed]);
          while ((await near.runDue()) > 0);
          // Found by what the store kept of the first (its pages' fingerprints and places), in a later round.
          const again = await store_(
            '盖章页（重扫）.tif',
            await rescanned(png, 2, { dpi: 300, format: 'tiff' }),
            'image/tiff',
          );
          const elsewhere = await store_(
            '另一张盖章页.jpg',
            await rescanned(await movedRight(png, 300), 3, { dpi: 150, format: 'jpeg' }), // 2.5 cm further right
            'image/jpeg',
          );
          await near.enqueue([again]);
          while ((await near.runDue()) > 0);
          await near.enqueue([elsewhere]);
          while ((await near.runDue()) > 0);
          const [first, other] = [
            (await store.nearDuplicates.get(sealed))!,
            (await store.nearDuplicates.get(elsewhere))!,
          ];
          assert.ok(
            pageHashDistance(first.pages[0]!.hash!, other.pages[0]!.hash!) <= DEFAULT_SETTINGS.maxImageHamming,
            'the seal looks the same wherever it was stamped',
          );
          assert.ok(first.pages[0]!.box![0] < other.pages[0]!.box![0], 'the other stamp lies further right');
          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.deepEqual(
            report.items.map((r) => [[r.a.fileName, r.b.fileName].sort(), r.method]),
            [[['盖章页.jpg', '盖章页（重扫）.tif'], 'image']],
          );
        },
      );

      it(
        "reads a scanner's PDF (pages without a text layer) and pairs it with the text it was printed from",
        { timeout: 300_000 },
        async () => {
          const near = service();
          const scan = await store_(
            '两页扫描件.pdf',
            await scannedPdf([FIRST_PAGE, SECOND_PAGE], 'slip'),
            'application/pdf',
          );
          const text = await store_('两页.txt', Buffer.from(`${FIRST_PAGE}\n${SECOND_PAGE}`), 'text/plain');
          await near.enqueue([scan, text]);
          assert.equal(await near.runDue(), 2);
          const fingerprint = await store.nearDuplicates.get(scan);
          assert.deepEqual([fingerprint?.format, fingerprint?.skipped], ['pdf', null]);
          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.deepEqual(
            report.items.map((r) => [r.a.fileName, r.b.fileName].sort()),
            [['两页.txt', '两页扫描件.pdf']],
          );
        },
      );

      it(
        "pairs a photograph scanned to PDF (a scanner's PDF, no text layer) with a JPEG scan of it, by the page's image",
        { timeout: 600_000 },
        async () => {
          const near = service();
          const photo = await printFigure({ kind: 'photo', seed: 7, caption: '图1 县档案馆新馆外景' });
          const asPdf = await scannedPdf([{ jpeg: await rescanned(photo.png, 2, { dpi: 150, format: 'jpeg' }) }]);
          const ids = [
            await store_('档案馆外景.jpg', await rescanned(photo.png, 1, { dpi: 150, format: 'jpeg' }), 'image/jpeg'),
            await store_('外景扫描件.pdf', asPdf, 'application/pdf'),
          ];
          await near.enqueue(ids);
          while ((await near.runDue()) > 0);
          const pdf = (await store.nearDuplicates.get(ids[1]!))!;
          assert.equal(pdf.pages.length, 1, "the PDF's scanned page kept with its image fingerprint");
          assert.ok(pdf.pages[0]!.hash);
          const report = await near.report({ sort: 'foundAt', limit: 10, offset: 0 });
          assert.deepEqual(
            report.items.map((r) => [[r.a.fileName, r.b.fileName].sort(), r.method, nearDuplicateKind(r)]),
            [[['外景扫描件.pdf', '档案馆外景.jpg'], 'image', 'rescan']],
          );
        },
      );

      it('with OCR off, records an image as having no text, saying why, and reads other files', async () => {
        await reader.close();
        reader = new ProcessTextReader({ settings: {}, ocr: false, heapMb: 512 });
        const near = service();
        const scan = await store_('静夜思扫描件.jpg', await scannedPage(POEM, 'jpeg', 'slip'), 'image/jpeg');
        const poem = await store_('静夜思.txt', Buffer.from(POEM), 'text/plain');
        await near.enqueue([scan, poem]);
        assert.equal(await near.runDue(), 2);
        assert.equal((await store.nearDuplicates.get(scan))?.skipped, OCR_OFF);
        assert.equal((await store.nearDuplicates.get(poem))?.skipped, null);
      });
    },
  );
}
