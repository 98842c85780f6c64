import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { collisionsQuery, crossUnitQuery, repeatUploadersQuery, savingsQuery } from '../../../shared/reports.js';
import type { Account } from '../accounts/port.js';
import type { ArchiveStore } from '../archive-store.js';
import type { UnitFilesQuery } from '../unit-files/port.js';
import type { UploadRecord } from './port.js';
import {
  carryingUpload,
  commitBytes,
  countUpload,
  randomContent,
  recordUpload,
  testAccount,
  unit,
  uploadAction,
  uploadRecord,
} from '../../../test/support/content.js';
import { archiveAnswers, PEOPLE, seedReportArchive } from '../../../test/support/report-dataset.js';
import { ReportCalendar, ReportService } from '../../../test/support/services.js';
import {
  seedingOf,
  type SeededCatalogEntry,
  type SeededLedger,
  type SeededUpload,
} from '../../../test/support/seeding.js';
import { conformanceSuite, useFreshStore, type OpenedStore, type StoreTarget } from '../../../test/support/stores.js';

/** What every store adapter's ledger must do (run against each adapter by test/store/). */
export function ledgerConformance(target: StoreTarget): void {
  conformanceSuite('ledger', target, (store) => {
    describe('ledger', () => {
      const at = (day: number, hour = 8) => new Date(Date.UTC(2026, 4, day, hour));
      /** Counts an upload under a new key; answers the key. */
      const counted = async (record: UploadRecord) => {
        const action = uploadAction(record);
        await store.ledger.count(action);
        return action.key;
      };
      /** The space-saved report, whole or per day, as an administrator of everything reads it. */
      const savingsReport = async (group?: 'day') =>
        await new ReportService(store.reports, new ReportCalendar('UTC'), store.accounts).savings(
          savingsQuery.parse(group ? { group } : {}),
        );
      /** Per day of the space-saved report: [uploads, saved uploads]. */
      const days = async () =>
        Object.fromEntries(
          (await savingsReport('day')).items.map((r) => [
            (r as { period: string }).period,
            [r.uploads, r.savedUploads],
          ]),
        ) as Record<string, [number, number]>;

      it('starts an entry at 1 and counts repeats by the same user in the same unit', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount();
        assert.deepEqual(await recordUpload(store, clerk, entry.fileId, 'first.pdf'), { uploadCount: 1 });
        assert.deepEqual(await recordUpload(store, clerk, entry.fileId, 'second.pdf'), { uploadCount: 2 });
        const [e] = await store.ledger.entriesForFile(entry.fileId);
        assert.equal(e!.uploadCount, 2);
        assert.equal(e!.userId, clerk.id);
        assert.equal(e!.userName, clerk.username);
        assert.deepEqual(e!.unit, clerk.unit);
        assert.equal(e!.uploadFileName, 'first.pdf');
        assert.equal(e!.lastUploadFileName, 'second.pdf');
        assert.equal(e!.lastContentType, 'application/pdf');
        assert.ok(e!.lastUploadTime >= e!.uploadTime);
      });

      it('counts many uploads at once, in order, as one at a time would', async () => {
        const a = (await commitBytes(store, randomContent(10))).entry;
        const b = (await commitBytes(store, randomContent(11))).entry;
        const clerk = testAccount();
        const at = new Date();
        const upload = (fileId: string, fileName: string) => ({
          account: clerk,
          fileId,
          fileName,
          contentType: 'application/pdf',
          at,
          day: at.toISOString().slice(0, 10),
          fileLength: 10,
          carriedBytes: false,
        });
        await recordUpload(store, clerk, a.fileId);
        const counts = await store.ledger.countMany(
          [upload(a.fileId, 'a2.pdf'), upload(b.fileId, 'b1.pdf'), upload(a.fileId, 'a3.pdf')].map((r) =>
            uploadAction(r),
          ),
        );
        assert.deepEqual(
          counts.map((c) => c.uploadCount),
          [2, 1, 3],
        );
        const [entryA] = await store.ledger.entriesForFile(a.fileId);
        assert.deepEqual([entryA!.uploadCount, entryA!.lastUploadFileName], [3, 'a3.pdf']);
        assert.deepEqual(await store.ledger.countMany([]), []);
      });

      it('gives another user, or the same user in another unit, an entry of its own', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount();
        const colleague = testAccount();
        const movedClerk = { ...clerk, unit: unit('unit-b') };
        await recordUpload(store, clerk, entry.fileId);
        assert.deepEqual(await recordUpload(store, colleague, entry.fileId), { uploadCount: 1 });
        assert.deepEqual(await recordUpload(store, movedClerk, entry.fileId), { uploadCount: 1 });
        assert.equal((await store.ledger.entriesForFile(entry.fileId)).length, 3);
      });

      describe('an upload action is counted once under its key', () => {
        const at = new Date('2026-03-02T08:00:00Z');
        const upload = (account: Account, fileId: string, fileName = 'a.pdf') => ({
          account,
          fileId,
          fileName,
          contentType: 'application/pdf',
          at,
          day: '2026-03-02',
          fileLength: 10,
          carriedBytes: false,
        });
        /** What the ledger, the day's tally and the audit log hold of a file. */
        const holdings = async (fileId: string) => ({
          ledger: (await store.ledger.entriesForFile(fileId)).map((e) => e.uploadCount),
          tally: (await savingsReport()).summary.uploads,
          audit: (await store.audit.search({ limit: 100, offset: 0 })).items.filter((e) => e.fileId === fileId).length,
        });

        it('answers a key counted before as it was counted, and changes nothing', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const first = await store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'tus:u1', 'stored'));
          assert.deepEqual(first, {
            accountId: clerk.id,
            fileId: entry.fileId,
            status: 'stored',
            uploadCount: 1,
            stored: false,
            repeated: false,
          });
          await countUpload(store, upload(clerk, entry.fileId));
          // The retry's own record (another name, another day) is not what counts: the first is.
          const again = await store.ledger.count(
            uploadAction({ ...upload(clerk, entry.fileId, 'retry.pdf'), day: '2026-03-03' }, 'tus:u1', 'duplicate'),
          );
          assert.deepEqual(again, { ...first, repeated: true });
          assert.deepEqual(await holdings(entry.fileId), { ledger: [2], tally: 2, audit: 2 });
          assert.equal((await store.ledger.entriesForFile(entry.fileId))[0]!.lastUploadFileName, 'a.pdf');
          assert.deepEqual(await store.ledger.counted('tus:u1'), { ...first, repeated: true });
          assert.equal(await store.ledger.counted('tus:unknown'), undefined);
          const many = await store.ledger.countedMany(['tus:unknown', 'tus:u1', 'tus:u1']);
          assert.deepEqual([...many], [['tus:u1', { ...first, repeated: true }]]);
        });

        it('counts one key sent ten times at once once, with one answer', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const answers = await Promise.all(
            Array.from({ length: 10 }, () => store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'claim:c1'))),
          );
          assert.deepEqual(new Set(answers.map((a) => a.uploadCount)), new Set([1]));
          assert.equal(answers.filter((a) => !a.repeated).length, 1);
          assert.deepEqual(await holdings(entry.fileId), { ledger: [1], tally: 1, audit: 1 });
        });

        it('counts a batch with keys counted before, leaving those as they were', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          await store.ledger.count(uploadAction(upload(clerk, entry.fileId), 'batch:k:0'));
          const counts = await store.ledger.countMany(
            ['batch:k:0', 'batch:k:1', 'batch:k:1'].map((key) => uploadAction(upload(clerk, entry.fileId), key)),
          );
          assert.deepEqual(
            counts.map((c) => [c.uploadCount, c.repeated]),
            [
              [1, true],
              [2, false],
              [2, true],
            ],
          );
          assert.deepEqual(await holdings(entry.fileId), { ledger: [2], tally: 2, audit: 2 });
          assert.equal(await store.ledger.finishInterrupted(new Date(Date.now() + 60_000)), 0);
        });
      });

      describe('who stored a file', () => {
        const carrying = (account: Account, fileId: string) =>
          uploadAction(carryingUpload(account, fileId), randomUUID(), 'stored');
        const tally = async () => (await savingsReport()).summary;

        it('counts only the first of uploads carrying the same new file as storing it, however they race', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const before = await tally();
          const actions = Array.from({ length: 8 }, () => carrying(testAccount(), entry.fileId));
          const answers = await Promise.all(actions.map((a) => store.ledger.count(a)));
          assert.equal(answers.filter((a) => a.stored).length, 1);
          // Each is told what its uploader may know: here, that the file is new to them.
          assert.ok(answers.every((a) => a.status === 'stored'));
          const after = await tally();
          assert.equal(after.uploads - before.uploads, 8);
          assert.equal(after.savedUploads - before.savedUploads, 7);
          const events = (await store.audit.search({ limit: 100, offset: 0 })).items.filter(
            (e) => e.fileId === entry.fileId,
          );
          assert.deepEqual(events.map((e) => e.detail).sort(), [
            ...Array<string>(7).fill('test: duplicate'),
            'test: stored',
          ]);
          // Asked again, each is answered as it was counted.
          for (const [i, a] of actions.entries())
            assert.equal((await store.ledger.count(a)).stored, answers[i]!.stored);
        });

        it('counts a file stored by an upload counted first, and none after it, in one batch too', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const [first, second] = await store.ledger.countMany([
            carrying(clerk, entry.fileId),
            carrying(clerk, entry.fileId),
          ]);
          assert.deepEqual([first!.stored, second!.stored], [true, false]);
          assert.equal((await store.ledger.count(carrying(testAccount(), entry.fileId))).stored, false);
        });

        it('never counts an instant upload as storing a file, nor the upload carrying it after one', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          await recordUpload(store, testAccount(), entry.fileId);
          assert.equal((await store.ledger.count(carrying(testAccount(), entry.fileId))).stored, false);
        });
      });

      describe('an upload counted is reversed once under its key', () => {
        const savings = async () => (await savingsReport()).summary;

        it('leaves every total and report answer as they were before the uploads it reverses were counted', async () => {
          const files = await seedReportArchive(store);
          const newFile = (await commitBytes(store, randomContent(64))).entry;
          const before = await archiveAnswers(store, files);
          const north = testAccount({ username: 'north', unit: unit('u-north', '东县') });
          const keys = [
            // A new holder of a shared file: a unit, a user, a name and a day more; then a repeat of it.
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(1))),
            await counted(uploadRecord(north, files.F1.fileId, '北/通知-再传.pdf', at(2))),
            // Repeats of entries already there: a later last upload under a new name and type, a
            // repeat on a day with uploads, an upload in the middle of an entry's.
            await counted(uploadRecord(PEOPLE.alice, files.F1.fileId, '通知(改).pdf', at(20), 'image/png')),
            await counted({
              ...uploadRecord(PEOPLE.bob, files.F3.fileId, '报表.xlsx', new Date('2026-03-06T03:00:00Z')),
              day: '2026-03-06',
              fileLength: 500,
            }),
            await counted(uploadRecord(PEOPLE.carol, files.C2.fileId, '扫描件B.pdf', new Date('2026-03-01T01:00:00Z'))),
            // The only upload of a new file, which stored it.
            await counted(carryingUpload(north, newFile.fileId, at(3))),
          ];
          assert.notDeepEqual(await archiveAnswers(store, files), before);
          for (const [i, key] of keys.entries())
            assert.equal(await store.ledger.reverse(key, `reversal:${i}`), 'reversed');
          assert.deepEqual(await archiveAnswers(store, files), before);
          assert.deepEqual(await store.ledger.entriesForFile(newFile.fileId), []);
          assert.equal(await store.ledger.uploadedBy(files.F1.fileId, north.id, 'u-north'), false);
          assert.deepEqual(
            (await store.ledger.uploaders(undefined)).filter((u) => u.id === north.id),
            [],
            'no longer an uploader',
          );
        });

        it('gives an entry the first and last upload, name and type of its uploads left', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const first = await counted(uploadRecord(clerk, entry.fileId, '一.pdf', at(1)));
          await counted(uploadRecord(clerk, entry.fileId, '二.pdf', at(2), 'image/tiff'));
          await counted(uploadRecord(clerk, entry.fileId, '三.pdf', at(3)));
          const last = await counted(uploadRecord(clerk, entry.fileId, '四.png', at(4), 'image/png'));
          await store.ledger.reverse(first, 'r1');
          await store.ledger.reverse(last, 'r2');
          const [e] = await store.ledger.entriesForFile(entry.fileId);
          assert.deepEqual(
            [
              e!.uploadCount,
              e!.uploadTime,
              e!.uploadFileName,
              e!.lastUploadTime,
              e!.lastUploadFileName,
              e!.lastContentType,
            ],
            [2, at(2), '二.pdf', at(3), '三.pdf', 'application/pdf'],
          );
          const names = await store.unitFiles.list({
            unitId: clerk.unit.id,
            accountId: clerk.id,
            limit: 10,
            offset: 0,
          });
          assert.deepEqual(names.items[0]?.names.slice().sort(), ['三.pdf', '二.pdf'], 'the names of the uploads left');
        });

        it('reverses once: again under its key changes nothing, under another key it is already reversed', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1)));
          const key = await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(2)));
          const answers = await Promise.all(Array.from({ length: 5 }, () => store.ledger.reverse(key, 'r')));
          assert.deepEqual(answers.sort(), ['repeated', 'repeated', 'repeated', 'repeated', 'reversed']);
          const others = await Promise.all(['s1', 's2', 's3'].map((k) => store.ledger.reverse(key, k)));
          assert.deepEqual(others, ['already reversed', 'already reversed', 'already reversed']);
          assert.equal(await store.ledger.reverse(key, 'r'), 'repeated');
          assert.equal(await store.ledger.reverse('tus:never-counted', 'r'), 'not counted');
          assert.equal((await store.ledger.entriesForFile(entry.fileId))[0]!.uploadCount, 1);
          assert.deepEqual([(await savings()).uploads, (await savings()).savedUploads], [1, 1]);
          assert.equal(await store.ledger.finishInterrupted(new Date(Date.now() + 60_000)), 0);
        });

        it('keeps a reversed action counted for its retries, and counts the file anew under a new key', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const action = uploadAction(carryingUpload(testAccount(), entry.fileId), 'tus:first', 'stored');
          const answer = await store.ledger.count(action);
          assert.equal(answer.stored, true);
          assert.equal(await store.ledger.reverse(action.key, 'r'), 'reversed');
          // A retry of the reversed action is answered as it was counted, and counts nothing.
          assert.deepEqual(await store.ledger.count(action), { ...answer, repeated: true });
          assert.deepEqual(await store.ledger.entriesForFile(entry.fileId), []);
          assert.deepEqual([(await savings()).uploads, (await savings()).savedUploads], [0, 0]);
          // As if the reversed upload had never been counted: the next carrying the bytes stored them.
          const again = await store.ledger.count(
            uploadAction(carryingUpload(testAccount(), entry.fileId), 'tus:again'),
          );
          assert.deepEqual([again.uploadCount, again.stored], [1, true]);
          assert.deepEqual([(await savings()).uploads, (await savings()).savedUploads], [1, 0]);
        });
      });

      describe('an upload reversed is restored once under its key', () => {
        it('leaves every total as counting only the actions that count would, however often they are reversed and restored', async () => {
          const files = await seedReportArchive(store);
          const newFile = (await commitBytes(store, randomContent(64))).entry;
          const north = testAccount({ username: 'north', unit: unit('u-north', '东县') });
          const south = testAccount({ username: 'south', unit: unit('u-south', '西县') });
          const everything = { ...files, NEW: newFile } as typeof files;
          const neverCounted = await archiveAnswers(store, everything);
          const keys = [
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(1))),
            await counted(uploadRecord(north, files.F1.fileId, '北/通知-再传.pdf', at(2))),
            await counted(uploadRecord(PEOPLE.alice, files.F1.fileId, '通知(改).pdf', at(20), 'image/png')),
            // (Each later than its entry's uploads: a count out of time order keeps its name as the
            // entry's last, which a change of the entry then orders by time, docs/decisions/counts.md.)
            await counted(uploadRecord(PEOPLE.carol, files.C2.fileId, '扫描件B.pdf', at(21))),
            // A new file: stored by the first, then uploaded by two units on later days.
            await counted(carryingUpload(north, newFile.fileId, at(3))),
            await counted({ ...uploadRecord(south, newFile.fileId, '南/副本.pdf', at(5)), fileLength: 64 }),
            await counted({ ...carryingUpload(north, newFile.fileId, at(7)), fileName: '北/再传.pdf', fileLength: 64 }),
            // Its first name used again: the unit's names are listed by first use.
            await counted({ ...carryingUpload(north, newFile.fileId, at(9)), fileLength: 64 }),
          ];
          // The model: the totals are those of the actions that count, whatever way led there.
          const seen = new Map<string, Awaited<ReturnType<typeof archiveAnswers>>>();
          const reversed = new Set<number>();
          const check = async (step: string) => {
            const answers = await archiveAnswers(store, everything);
            const state = [...reversed].sort().join(',');
            if (reversed.size === keys.length) assert.deepEqual(answers, neverCounted, step);
            const before = seen.get(state);
            if (before) assert.deepEqual(answers, before, `${step}: as when {${state}} were reversed before`);
            else seen.set(state, answers);
          };
          await check('all counted');
          // A walk that comes back to the same sets of reversed actions by other ways: among four
          // actions at a time, then the next four (a fixed pseudo-random order, so a failure is the
          // same every run).
          let seed = 41;
          const next = () => Math.floor((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 16) % 4;
          let changes = 0;
          for (let step = 0; step < 48; step++) {
            const i = (next() + 4 * Math.floor(step / 16)) % keys.length;
            const changeKey = `change:${changes++}`;
            if (reversed.has(i)) {
              assert.equal(await store.ledger.restore(keys[i]!, changeKey), 'restored');
              reversed.delete(i);
            } else {
              assert.equal(await store.ledger.reverse(keys[i]!, changeKey), 'reversed');
              reversed.add(i);
            }
            await check(`step ${step}: ${reversed.has(i) ? 'reversed' : 'restored'} ${i}`);
          }
          for (const [i, key] of keys.entries())
            if (!reversed.has(i)) {
              assert.equal(await store.ledger.reverse(key, `change:${changes++}`), 'reversed');
              reversed.add(i);
            }
          await check('all reversed');
          for (const [i, key] of keys.entries()) {
            assert.equal(await store.ledger.restore(key, `change:${changes++}`), 'restored');
            reversed.delete(i);
          }
          await check('all restored');
          assert.ok(seen.size >= 12 && seen.size < 40, `the walk visits many states, some again (${seen.size})`);
        });

        it('counts every change once by its own key: retries of any earlier key repeat and change nothing', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1)));
          const key = await counted(uploadRecord(clerk, entry.fileId, 'b.pdf', at(2)));
          const never = await counted(uploadRecord(clerk, entry.fileId, 'c.pdf', at(3)));
          const count = async () => (await store.ledger.entriesForFile(entry.fileId))[0]!.uploadCount;
          assert.equal(await store.ledger.restore(key, 's0'), 'not reversed', 'never reversed');
          assert.equal(await store.ledger.reverse(key, 'r1'), 'reversed');
          assert.equal(await store.ledger.restore(key, 's1'), 'restored');
          assert.equal(await count(), 3);
          assert.equal(await store.ledger.reverse(key, 'r2'), 'reversed');
          assert.equal(await count(), 2);
          assert.equal(await store.ledger.restore(key, 's2'), 'restored');
          assert.equal(await count(), 3);
          for (const change of ['r1', 's1', 'r2', 's2']) {
            assert.equal(await store.ledger.reverse(key, change), 'repeated', `reversed again under ${change}`);
            assert.equal(await store.ledger.restore(key, change), 'repeated', `restored again under ${change}`);
          }
          assert.equal(await count(), 3);
          assert.equal(await store.ledger.restore(key, 's3'), 'not reversed', 'restored already');
          assert.equal(await store.ledger.restore(never, 's1'), 'not reversed', 'a change key belongs to its action');
          assert.equal(await store.ledger.restore('tus:never-counted', 's1'), 'not counted');
          assert.equal(await store.ledger.reverse(key, 'r3'), 'reversed');
          assert.equal(await store.ledger.reverse(key, 'r4'), 'already reversed');
          assert.equal(await count(), 2);
          assert.deepEqual(
            [(await savingsReport()).summary.uploads, (await savingsReport()).summary.savedUploads],
            [2, 2],
          );
          assert.equal(await store.ledger.finishInterrupted(new Date(Date.now() + 60_000)), 0);
        });

        it('restores once when restores race: one restores, the others find it counting or repeat', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1)));
          const key = await counted(uploadRecord(clerk, entry.fileId, 'b.pdf', at(2)));
          assert.equal(await store.ledger.reverse(key, 'r'), 'reversed');
          const others = await Promise.all(['s1', 's2'].map((k) => store.ledger.restore(key, k)));
          assert.deepEqual(others.sort(), ['not reversed', 'restored']);
          assert.equal(await store.ledger.reverse(key, 'r2'), 'reversed');
          const same = await Promise.all(Array.from({ length: 5 }, () => store.ledger.restore(key, 's3')));
          assert.deepEqual(same.sort(), ['repeated', 'repeated', 'repeated', 'repeated', 'restored']);
          const [e] = await store.ledger.entriesForFile(entry.fileId);
          assert.deepEqual([e!.uploadCount, e!.lastUploadFileName], [2, 'b.pdf']);
          assert.deepEqual(
            [(await savingsReport()).summary.uploads, (await savingsReport()).summary.savedUploads],
            [2, 2],
          );
        });

        it('purges a reversed action once: it stays reversed, changes no total and is never restored; a purge and restores racing, one wins', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const kept = await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1)));
          const key = await counted(uploadRecord(clerk, entry.fileId, 'b.pdf', at(2)));
          assert.equal(await store.ledger.countingUploads(entry.fileId), 2);
          assert.equal(await store.ledger.purge(key, 'p'), 'not reversed');
          assert.equal(await store.ledger.purge('tus:nobody:x', 'p'), 'not counted');
          assert.equal(await store.ledger.reverse(key, 'r'), 'reversed');
          assert.equal(await store.ledger.countingUploads(entry.fileId), 1);
          const before = await store.ledger.entriesForFile(entry.fileId);
          const raced = await Promise.all([store.ledger.purge(key, 'p'), store.ledger.restore(key, 's')]);
          if (raced[0] === 'purged') {
            assert.equal(raced[1], 'purged', 'the restore lost: it says so');
            assert.deepEqual(await store.ledger.entriesForFile(entry.fileId), before, 'no total changed');
            assert.equal(await store.ledger.purge(key, 'p'), 'repeated');
            assert.equal(await store.ledger.purge(key, 'p2'), 'already purged');
            assert.equal(await store.ledger.restore(key, 's2'), 'purged');
            assert.equal(await store.ledger.reverse(key, 'r2'), 'already reversed');
            assert.equal(await store.ledger.countingUploads(entry.fileId), 1);
          } else {
            assert.deepEqual(raced, ['not reversed', 'restored']);
            assert.equal(await store.ledger.countingUploads(entry.fileId), 2);
          }
          assert.equal(await store.ledger.reverse(kept, 'r3'), 'reversed');
          assert.equal(await store.ledger.countingUploads(entry.fileId), raced[0] === 'purged' ? 0 : 1);
        });

        it('tells of each recorded upload whether it counts now: reversed or purged not, restored again', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const [kept, reversed, restored, purged] = [
            await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1))),
            await counted(uploadRecord(clerk, entry.fileId, 'b.pdf', at(2))),
            await counted(uploadRecord(clerk, entry.fileId, 'c.pdf', at(3))),
            await counted(uploadRecord(clerk, entry.fileId, 'd.pdf', at(4))),
          ];
          for (const key of [reversed, restored, purged])
            assert.equal(await store.ledger.reverse(key, `r:${key}`), 'reversed');
          assert.equal(await store.ledger.restore(restored, 's'), 'restored');
          assert.equal(await store.ledger.purge(purged, 'p'), 'purged');
          const found = await store.ledger.recordedUploads([kept, reversed, restored, purged, 'tus:never']);
          assert.deepEqual(
            [...found.values()].map((u) => [u.key, u.fileName, u.counted]).sort(),
            [
              [kept, 'a.pdf', true],
              [reversed, 'b.pdf', false],
              [restored, 'c.pdf', true],
              [purged, 'd.pdf', false],
            ].sort(),
          );
        });

        it("keeps a file's uploads that count, less one, saved: the holder of its bytes passes on and back", async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const [a, b, c] = ['u-a', 'u-b', 'u-c'].map((id) => testAccount({ unit: unit(id) })) as [
            Account,
            Account,
            Account,
          ];
          // a's stored the file (day 1); b's and c's did not (days 2 and 3, b's an instant upload).
          const storer = await counted(carryingUpload(a, entry.fileId, at(1)));
          const second = await counted(uploadRecord(b, entry.fileId, 'b.pdf', at(2)));
          const third = await counted(carryingUpload(c, entry.fileId, at(3)));
          const original = { '2026-05-01': [1, 0], '2026-05-02': [1, 1], '2026-05-03': [1, 1] };
          assert.deepEqual(await days(), original);
          await store.ledger.reverse(storer, 'r1');
          assert.deepEqual(await days(), { '2026-05-02': [1, 0], '2026-05-03': [1, 1] }, 'the earliest left holds it');
          await store.ledger.restore(storer, 's1');
          assert.deepEqual(await days(), original, 'the upload that stored it takes it back');
          await store.ledger.reverse(storer, 'r2');
          await store.ledger.reverse(second, 'r3');
          assert.deepEqual(await days(), { '2026-05-03': [1, 0] });
          await store.ledger.restore(second, 's3');
          assert.deepEqual(await days(), { '2026-05-02': [1, 0], '2026-05-03': [1, 1] }, 'as if never reversed');
          await store.ledger.reverse(second, 'r4');
          await store.ledger.reverse(third, 'r5');
          assert.deepEqual(await days(), {});
          await store.ledger.restore(third, 's5');
          assert.deepEqual(await days(), { '2026-05-03': [1, 0] }, 'restored alone, it holds the bytes');
          // The file counts again: a new upload carrying its bytes did not store them.
          const later = await store.ledger.count(uploadAction(carryingUpload(b, entry.fileId, at(4))));
          assert.equal(later.stored, false);
          await store.ledger.restore(storer, 's2');
          await store.ledger.restore(second, 's4');
          assert.deepEqual(await days(), { ...original, '2026-05-04': [1, 1] });
        });

        it('lets an upload counted into a file none of whose uploads counts hold its bytes, and give them back', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const [a, b] = ['u-a', 'u-b'].map((id) => testAccount({ unit: unit(id) })) as [Account, Account];
          const storer = await counted(carryingUpload(a, entry.fileId, at(1)));
          await store.ledger.reverse(storer, 'r1');
          assert.deepEqual(await days(), {});
          // Every upload of the file withdrawn, its bytes kept for the trash: an instant upload of
          // it is the one upload the archive keeps them for, so nothing is saved.
          const instant = await store.ledger.count(uploadAction(uploadRecord(b, entry.fileId, 'b.pdf', at(2))));
          assert.equal(instant.stored, false);
          assert.deepEqual(await days(), { '2026-05-02': [1, 0] });
          await store.ledger.restore(storer, 's1');
          assert.deepEqual(
            await days(),
            { '2026-05-01': [1, 0], '2026-05-02': [1, 1] },
            'the upload that stored it takes it back',
          );
        });

        it('saves every upload of a file no upload ever stored, however many are withdrawn first', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const [a, b] = ['u-a', 'u-b'].map((id) => testAccount({ unit: unit(id) })) as [Account, Account];
          const first = await counted(uploadRecord(a, entry.fileId, 'a.pdf', at(1)));
          await store.ledger.reverse(first, 'r1');
          await counted(uploadRecord(b, entry.fileId, 'b.pdf', at(2)));
          assert.deepEqual(await days(), { '2026-05-02': [1, 1] });
        });
      });

      describe('the space saved, summed two ways', () => {
        /**
         * Every selection of the space-saved report (groups, unit subtrees at each level, days,
         * orders, a page inside and past the end), each asked as it is and with a file name filter
         * every file's name passes ('.'): the embedded store answers the first from its sums per
         * unit level and day and the second from the files' day tallies, which must agree. A
         * change that left either behind (a withdrawal not taken out of the sums) fails here.
         */
        const selections = (() => {
          const units: Array<Record<string, string>> = [
            {},
            { city: '江城市' },
            { city: '江城市', county: '东县' },
            { city: '江城市', county: '东县', town: '城关镇' },
            { city: '沧州市', county: '东县' },
            { city: '河市' },
          ];
          const all: Array<Record<string, string>> = [];
          for (const group of ['unit', 'day', 'week', 'month'])
            for (const where of units) all.push({ group, ...where, limit: '200' });
          all.push(
            { from: '2026-03-04', to: '2026-05-03', limit: '200' },
            { group: 'day', city: '江城市', county: '西县', from: '2026-03-05', limit: '200' },
            { group: 'week', to: '2026-03-31', sort: 'savedBytes', order: 'asc', limit: '200' },
            { sort: 'uploads', limit: '200' },
            { city: '江城市', sort: 'unit', order: 'asc', limit: '200' },
            { city: '江城市', county: '东县', sort: 'savedUploads', limit: '200' },
            { group: 'month', sort: 'period', order: 'asc', limit: '200' },
            { group: 'day', sort: 'savedBytes', limit: '3', offset: '2' },
            { group: 'day', offset: '500' },
            { city: '江城市', offset: '50' },
            { city: '无此市' },
          );
          return all;
        })();
        const service = () => new ReportService(store.reports, new ReportCalendar('UTC'), store.accounts);
        /** Each selection's answer from the kept sums, checked against the files' tallies; answers them. */
        const bothWays = async (step: string) => {
          const reports = service();
          const answers = [];
          for (const q of selections) {
            const summed = await reports.savings(savingsQuery.parse(q));
            const byFile = await reports.savings(savingsQuery.parse({ ...q, q: '.' }));
            assert.deepEqual(summed, byFile, `${step}: ${JSON.stringify(q)}`);
            answers.push(summed);
          }
          return answers;
        };

        it('agrees for every filter, group and order through counts, repeats, withdrawals and restores', async () => {
          const files = await seedReportArchive(store);
          const newFile = (await commitBytes(store, randomContent(64), '新.pdf')).entry;
          const counted0 = await bothWays('the archive counted');
          assert.deepEqual(counted0[0]!.summary, { uploads: 18, savedUploads: 12, savedBytes: 14300 });
          const north = testAccount({ username: 'north', unit: unit('u-north', '东县') });
          const cityClerk = testAccount({ username: 'city', unit: PEOPLE.frank.unit });
          const keys = [
            // A new holder in another city; a repeat of it on the same day, and on another.
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(1))),
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(1, 9))),
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(2))),
            // Repeats on a day of the archive's tallies (2026-03-06), and of a city's own unit.
            await counted({
              ...uploadRecord(PEOPLE.bob, files.F3.fileId, '报表.xlsx', new Date('2026-03-06T03:00:00Z')),
              day: '2026-03-06',
              fileLength: 500,
            }),
            await counted({ ...uploadRecord(cityClerk, files.F2.fileId, '纪要.docx', at(3)), fileLength: 3000 }),
            // A new file: stored by its first upload, then uploaded again in two units.
            await counted({ ...carryingUpload(north, newFile.fileId, at(3)), fileLength: 64 }),
            await counted({ ...uploadRecord(PEOPLE.carol, newFile.fileId, '新.pdf', at(3)), fileLength: 64 }),
            await counted({ ...uploadRecord(PEOPLE.erin, newFile.fileId, '新.pdf', at(4)), fileLength: 64 }),
          ];
          const moreCounted = await bothWays('more counted');
          assert.notDeepEqual(moreCounted, counted0);
          // Withdrawn: the one that stored the new file (its holder passes on, a saved upload on
          // another day less), a tally's only upload, one of a tally's uploads; then by a batch.
          assert.equal(await store.ledger.reverse(keys[5]!, 'w5'), 'reversed');
          assert.equal(await store.ledger.reverse(keys[4]!, 'w4'), 'reversed');
          assert.equal(await store.ledger.reverse(keys[1]!, 'w1'), 'reversed');
          await bothWays('some withdrawn');
          assert.deepEqual(
            await store.ledger.reverseMany([0, 2, 3, 6, 7].map((i) => ({ actionKey: keys[i]!, changeKey: `w${i}` }))),
            ['reversed', 'reversed', 'reversed', 'reversed', 'reversed'],
          );
          assert.deepEqual(await bothWays('every new one withdrawn'), counted0, 'as if never counted');
          // Restored: all but one, some by a batch; then that one too.
          assert.deepEqual(
            await store.ledger.restoreMany([0, 1, 2, 3].map((i) => ({ actionKey: keys[i]!, changeKey: `s${i}` }))),
            ['restored', 'restored', 'restored', 'restored'],
          );
          for (const i of [5, 6, 7]) assert.equal(await store.ledger.restore(keys[i]!, `s${i}`), 'restored');
          await bothWays('all but one restored');
          assert.equal(await store.ledger.restore(keys[4]!, 's4'), 'restored');
          assert.deepEqual(await bothWays('all restored'), moreCounted, 'as if never withdrawn');
        });
      });

      describe('many changes at once: each as reverse or restore alone makes it, once by its key', () => {
        it('reverses a batch, several of one entry and one file among them, and restores it: every total back and forth', async () => {
          const files = await seedReportArchive(store);
          const newFile = (await commitBytes(store, randomContent(64))).entry;
          const before = await archiveAnswers(store, files);
          const north = testAccount({ username: 'north', unit: unit('u-north', '东县') });
          const keys = [
            await counted(uploadRecord(north, files.F1.fileId, '北/通知.pdf', at(1))),
            await counted(uploadRecord(north, files.F1.fileId, '北/通知-再传.pdf', at(2))),
            await counted(uploadRecord(PEOPLE.alice, files.F1.fileId, '通知(改).pdf', at(20), 'image/png')),
            // A new file's upload that stored it, then another of it that holds the bytes after it.
            await counted(carryingUpload(north, newFile.fileId, at(3))),
            await counted(carryingUpload(PEOPLE.alice, newFile.fileId, at(4))),
          ];
          const countedAll = await archiveAnswers(store, files);
          assert.notDeepEqual(countedAll, before);
          const reversals = keys.map((actionKey, i) => ({ actionKey, changeKey: `batch-r:${i}` }));
          assert.deepEqual(
            await store.ledger.reverseMany(reversals),
            keys.map(() => 'reversed'),
          );
          assert.deepEqual(await archiveAnswers(store, files), before, 'as if never counted');
          assert.deepEqual(await store.ledger.entriesForFile(newFile.fileId), []);
          const restores = keys.map((actionKey, i) => ({ actionKey, changeKey: `batch-s:${i}` }));
          assert.deepEqual(
            await store.ledger.restoreMany(restores),
            keys.map(() => 'restored'),
          );
          assert.deepEqual(await archiveAnswers(store, files), countedAll, 'as if never reversed');
          // Sent again whole: every change repeated, nothing changes.
          assert.deepEqual(
            await store.ledger.reverseMany(reversals),
            keys.map(() => 'repeated'),
          );
          assert.deepEqual(
            await store.ledger.restoreMany(restores),
            keys.map(() => 'repeated'),
          );
          assert.deepEqual(await archiveAnswers(store, files), countedAll);
          assert.deepEqual(await store.ledger.reverseMany([]), []);
          assert.equal(await store.ledger.finishInterrupted(new Date(Date.now() + 60_000)), 0);
        });

        it("passes the holder of a file's bytes on in a batch of its uploads as one by one: every day's saved uploads", async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const [a, b, c, d] = ['u-a', 'u-b', 'u-c', 'u-d'].map((id) => testAccount({ unit: unit(id) })) as [
            Account,
            Account,
            Account,
            Account,
          ];
          // a's stored the file (day 1); c's carried its bytes too (day 3); b's and d's did not.
          const storer = await counted(carryingUpload(a, entry.fileId, at(1)));
          const second = await counted(uploadRecord(b, entry.fileId, 'b.pdf', at(2)));
          const third = await counted(carryingUpload(c, entry.fileId, at(3)));
          const fourth = await counted(uploadRecord(d, entry.fileId, 'd.pdf', at(4)));
          const original = { '2026-05-01': [1, 0], '2026-05-02': [1, 1], '2026-05-03': [1, 1], '2026-05-04': [1, 1] };
          assert.deepEqual(await days(), original);
          const changes = (keys: string[], kind: string) =>
            keys.map((actionKey) => ({ actionKey, changeKey: `${kind}:${actionKey}` }));
          // The holder and the one after it in one batch, the holder not first: the last left holds it.
          await store.ledger.reverseMany(changes([second, storer, fourth], 'r1'));
          assert.deepEqual(await days(), { '2026-05-03': [1, 0] });
          // Restored with the one that stored it among them, it first: it takes the bytes back.
          await store.ledger.restoreMany(changes([fourth, storer], 's1'));
          assert.deepEqual(await days(), { '2026-05-01': [1, 0], '2026-05-03': [1, 1], '2026-05-04': [1, 1] });
          // Reversed and restored in one batch each, the holder in the middle of both.
          await store.ledger.reverseMany(changes([third, storer, fourth], 'r2'));
          assert.deepEqual(await days(), {});
          await store.ledger.restoreMany(changes([third, storer, second, fourth], 's2'));
          assert.deepEqual(await days(), original, 'as if never reversed');
          // A batch changing one upload back and forth, and the holder with it.
          await store.ledger.reverseMany([
            { actionKey: storer, changeKey: 'r3' },
            { actionKey: third, changeKey: 'r4' },
          ]);
          await store.ledger.restoreMany([
            { actionKey: third, changeKey: 's4' },
            { actionKey: storer, changeKey: 's3' },
          ]);
          assert.deepEqual(await days(), original);
        });

        it('answers each change as alone, mixed with single calls: repeated, already reversed, not reversed, not counted', async () => {
          const { entry } = await commitBytes(store, randomContent(10));
          const clerk = testAccount();
          const [a, b, c] = [
            await counted(uploadRecord(clerk, entry.fileId, 'a.pdf', at(1))),
            await counted(uploadRecord(clerk, entry.fileId, 'b.pdf', at(2))),
            await counted(uploadRecord(clerk, entry.fileId, 'c.pdf', at(3))),
          ];
          const count = async () => (await store.ledger.entriesForFile(entry.fileId))[0]?.uploadCount ?? 0;
          assert.equal(await store.ledger.reverse(a, 'r-a'), 'reversed');
          assert.deepEqual(
            await store.ledger.reverseMany([
              { actionKey: a, changeKey: 'r-a' },
              { actionKey: b, changeKey: 'r-b' },
              { actionKey: b, changeKey: 'r-b' },
              { actionKey: a, changeKey: 'r-a2' },
              { actionKey: 'tus:never-counted', changeKey: 'r' },
            ]),
            ['repeated', 'reversed', 'repeated', 'already reversed', 'not counted'],
          );
          assert.equal(await count(), 1);
          assert.equal(await store.ledger.reverse(b, 'r-b'), 'repeated', 'a key of a batch, alone');
          assert.equal(await store.ledger.restore(b, 's-b'), 'restored');
          assert.deepEqual(
            await store.ledger.restoreMany([
              { actionKey: b, changeKey: 's-b' },
              { actionKey: a, changeKey: 's-a' },
              { actionKey: c, changeKey: 's-c' },
              { actionKey: a, changeKey: 'r-a' },
              { actionKey: 'tus:never-counted', changeKey: 's' },
            ]),
            ['repeated', 'restored', 'not reversed', 'repeated', 'not counted'],
          );
          assert.equal(await count(), 3);
          // One action changed back and forth in one batch, in the order given.
          assert.deepEqual(
            await store.ledger.reverseMany([
              { actionKey: c, changeKey: 'r-c' },
              { actionKey: c, changeKey: 'r-c2' },
            ]),
            ['reversed', 'already reversed'],
          );
          assert.equal(await store.ledger.restore(c, 's-c2'), 'restored');
          assert.equal(await count(), 3);
          const [e] = await store.ledger.entriesForFile(entry.fileId);
          assert.deepEqual([e!.uploadFileName, e!.lastUploadFileName], ['a.pdf', 'c.pdf']);
        });
      });

      it('never loses an increment when one user repeats an upload concurrently', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount();
        const counts = await Promise.all(Array.from({ length: 50 }, () => recordUpload(store, clerk, entry.fileId)));
        assert.ok(counts.every((c) => c.uploadCount >= 1 && c.uploadCount <= 50));
        assert.equal((await store.ledger.entriesForFile(entry.fileId))[0]!.uploadCount, 50);
      });

      it("answers a unit's latest upload of a file only for units that uploaded it", async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount();
        await recordUpload(store, clerk, entry.fileId, 'old.pdf', new Date(Date.now() - 1000));
        await recordUpload(store, testAccount(), entry.fileId, 'new.pdf');
        assert.equal((await store.ledger.latestUnitUpload('unit-a', entry.fileId))?.lastUploadFileName, 'new.pdf');
        assert.equal(await store.ledger.latestUnitUpload('unit-b', entry.fileId), undefined);
        assert.equal(await store.ledger.latestUnitUpload('unit-a', '0123456789abcdef01234567'), undefined);
      });

      it('tells whether a unit, or a county of a city, has uploaded a file', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        await recordUpload(store, testAccount({ unit: unit('unit-q', '青县') }), entry.fileId);
        const cityLevel = testAccount({ unit: { id: 'city-hall', geoType: 'city', city: '沧州市' } });
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { unitId: 'unit-q' }), true);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { unitId: 'unit-x' }), false);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: '青县' }), true);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: '献县' }), false);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: null }), false);
        await recordUpload(store, cityLevel, entry.fileId);
        assert.equal(await store.ledger.hasUploadInScope(entry.fileId, { city: '沧州市', county: null }), true);
      });

      it('tells whether an account has an entry for a file in a unit: sent or proved there before', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const clerk = testAccount({ unit: unit('unit-q', '青县') });
        const colleague = testAccount({ unit: unit('unit-q', '青县') });
        assert.equal(await store.ledger.uploadedBy(entry.fileId, clerk.id, 'unit-q'), false);
        await recordUpload(store, clerk, entry.fileId);
        assert.equal(await store.ledger.uploadedBy(entry.fileId, clerk.id, 'unit-q'), true);
        assert.equal(await store.ledger.uploadedBy(entry.fileId, colleague.id, 'unit-q'), false, 'another account');
        assert.equal(
          await store.ledger.uploadedBy(entry.fileId, clerk.id, 'unit-x'),
          false,
          'the same account elsewhere',
        );
        const other = await commitBytes(store, randomContent(11));
        assert.equal(await store.ledger.uploadedBy(other.entry.fileId, clerk.id, 'unit-q'), false, 'another file');
        assert.equal(await store.ledger.uploadedBy('0123456789abcdef01234567', clerk.id, 'unit-q'), false);
        assert.equal(await store.ledger.uploadedBy('not an id', clerk.id, 'unit-q'), false);
      });

      it("gives an account's own entry for a file in a unit, with its last upload and count; nobody else's", async () => {
        const { entry } = await commitBytes(store, randomContent(12));
        const clerk = testAccount({ unit: unit('unit-q', '青县') });
        const colleague = testAccount({ unit: unit('unit-q', '青县') });
        assert.equal(await store.ledger.uploadOf(entry.fileId, clerk.id, 'unit-q'), undefined);
        await recordUpload(store, clerk, entry.fileId, '卷1/第1页.jpg', new Date('2026-11-28T01:56:00Z'));
        await recordUpload(store, colleague, entry.fileId, '别人的.jpg', new Date('2026-11-28T05:00:00Z'));
        await recordUpload(store, clerk, entry.fileId, '卷1/第1页.jpg', new Date('2026-11-28T03:10:00Z'));
        const own = await store.ledger.uploadOf(entry.fileId, clerk.id, 'unit-q');
        assert.deepEqual(
          [own?.userId, own?.unit.id, own?.fileId, own?.uploadCount, own?.lastUploadTime.toISOString()],
          [clerk.id, 'unit-q', entry.fileId, 2, '2026-11-28T03:10:00.000Z'],
          "the clerk's own entry, not the colleague's later upload",
        );
        assert.equal(await store.ledger.uploadOf(entry.fileId, clerk.id, 'unit-x'), undefined, 'another unit');
        assert.equal(await store.ledger.uploadOf('0123456789abcdef01234567', clerk.id, 'unit-q'), undefined);
        assert.equal(await store.ledger.uploadOf('not an id', clerk.id, 'unit-q'), undefined);
      });

      it('names who uploaded in a unit, a subtree or the whole archive, each account once, by login', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const other = (await commitBytes(store, randomContent(11))).entry;
        const zhang = testAccount({ username: 'zhang' });
        const li = testAccount({ username: 'li' });
        const wang = testAccount({ username: 'wang', unit: unit('unit-d', '东光县') });
        await recordUpload(store, zhang, entry.fileId);
        await recordUpload(store, zhang, other.fileId);
        await recordUpload(store, li, entry.fileId);
        await recordUpload(store, wang, entry.fileId);
        const names = async (scope?: Parameters<typeof store.ledger.uploaders>[0]) =>
          (await store.ledger.uploaders(scope)).map((u) => [u.id, u.username]);
        assert.deepEqual(await names({ unitId: 'unit-a' }), [
          [li.id, 'li'],
          [zhang.id, 'zhang'],
        ]);
        assert.deepEqual(await names({ subtree: { city: '沧州市', county: '东光县' } }), [[wang.id, 'wang']]);
        assert.deepEqual(await names({ subtree: { city: '沧州市' } }), await names(undefined));
        assert.equal((await names(undefined)).length, 3);
        assert.deepEqual(await names({ unitId: 'unit-none' }), []);
      });

      it('finds the latest upload of a file in a unit or a subtree: the name and type its view shows', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        for (const [unitId, county, name, day, type] of [
          ['unit-q', '青县', '青县/第1页.bin', 1, 'application/octet-stream'],
          ['unit-j', '青县', '金牛/第1页.png', 3, 'image/png'],
          ['unit-d', '东光县', '东光/扫描.tif', 5, 'image/tiff'],
        ] as const)
          await recordUpload(
            store,
            testAccount({ unit: unit(unitId, county) }),
            entry.fileId,
            name,
            new Date(Date.UTC(2026, 0, day)),
            type,
          );
        const latest = async (scope: Parameters<typeof store.ledger.latestUploadInScope>[1]) => {
          const found = await store.ledger.latestUploadInScope(entry.fileId, scope);
          return found && [found.lastUploadFileName, found.lastContentType];
        };
        assert.deepEqual(await latest({ subtree: { city: '沧州市', county: '青县' } }), [
          '金牛/第1页.png',
          'image/png',
        ]);
        assert.deepEqual(await latest({ subtree: { city: '沧州市' } }), ['东光/扫描.tif', 'image/tiff']);
        assert.deepEqual(await latest({ unitId: 'unit-q' }), ['青县/第1页.bin', 'application/octet-stream']);
        assert.equal(await latest({ subtree: { city: '沧州市', county: '献县' } }), undefined);
        assert.equal(await latest({ unitId: 'unit-none' }), undefined);
        assert.equal(
          await store.ledger.latestUploadInScope('000000000000000000000000', { subtree: { city: '沧州市' } }),
          undefined,
        );
      });

      it('tells whether a unit of a subtree (a city, a county, a town) has uploaded a file', async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        await recordUpload(store, testAccount({ unit: unit('unit-q', '青县') }), entry.fileId);
        const inSubtree = (subtree: { city: string; county?: string; town?: string }) =>
          store.ledger.hasUploadInScope(entry.fileId, { subtree });
        assert.equal(await inSubtree({ city: '沧州市' }), true);
        assert.equal(await inSubtree({ city: '沧州市', county: '青县' }), true);
        assert.equal(await inSubtree({ city: '沧州市', county: '青县', town: 'unit-q镇' }), true);
        assert.equal(await inSubtree({ city: '沧州市', county: '青县', town: '金牛镇' }), false);
        assert.equal(await inSubtree({ city: '沧州市', county: '献县' }), false);
        assert.equal(await inSubtree({ city: '廊坊市' }), false);
      });

      it('names the units with an upload of each file, counted or withdrawn, among some units when asked', async () => {
        const [{ entry: shared }, { entry: alone }, { entry: never }] = [
          await commitBytes(store, randomContent(10)),
          await commitBytes(store, randomContent(11)),
          await commitBytes(store, randomContent(12)),
        ];
        const [q, d, x] = ['unit-q', 'unit-d', 'unit-x'].map((id) => testAccount({ unit: unit(id) })) as [
          Account,
          Account,
          Account,
        ];
        await recordUpload(store, q, shared.fileId);
        await recordUpload(store, q, shared.fileId);
        await recordUpload(store, testAccount({ unit: unit('unit-q') }), shared.fileId);
        await recordUpload(store, d, alone.fileId);
        // A withdrawn upload (in the trash) still has its unit: a hold of that unit keeps the file.
        const key = randomUUID();
        await store.ledger.count(uploadAction(uploadRecord(x, shared.fileId), key));
        assert.equal(await store.ledger.reverse(key, `withdrawal:${key}`), 'reversed');
        const sorted = (m: Map<string, string[]>) =>
          [...m]
            .map(([fileId, units]) => [fileId, [...units].sort()])
            .sort(([a], [b]) => String(a).localeCompare(String(b)));
        const unknown = '0123456789abcdef01234567';
        assert.deepEqual(
          sorted(
            await store.ledger.unitsWithUploads([shared.fileId, alone.fileId, never.fileId, unknown, shared.fileId]),
          ),
          sorted(
            new Map([
              [shared.fileId, ['unit-q', 'unit-x']],
              [alone.fileId, ['unit-d']],
            ]),
          ),
        );
        assert.deepEqual(
          sorted(await store.ledger.unitsWithUploads([shared.fileId, alone.fileId], ['unit-x', 'unit-none'])),
          [[shared.fileId, ['unit-x']]],
        );
        assert.equal((await store.ledger.unitsWithUploads([shared.fileId], [])).size, 0);
        assert.equal((await store.ledger.unitsWithUploads([])).size, 0);
      });

      it("lists a file's uploads in a unit, a subtree or everywhere, newest first, reversed ones too", async () => {
        const { entry } = await commitBytes(store, randomContent(10));
        const other = (await commitBytes(store, randomContent(11))).entry;
        const clerk = testAccount({ username: 'clerk-q', unit: unit('unit-q', '青县') });
        const east = testAccount({ username: 'clerk-d', unit: unit('unit-d', '东光县') });
        const day = (d: number) => new Date(Date.UTC(2026, 4, d, 8));
        const keyed = async (record: UploadRecord, key: string) =>
          void (await store.ledger.count(uploadAction(record, key)));
        await keyed(uploadRecord(clerk, entry.fileId, '青县/第1页.pdf', day(1)), 'file:q1');
        await keyed(uploadRecord(clerk, entry.fileId, '青县/第1页.pdf', day(3)), 'file:q2');
        await keyed(uploadRecord(east, entry.fileId, '东光/扫描.pdf', day(2)), 'tus:d1');
        await keyed(uploadRecord(clerk, other.fileId, 'other.pdf', day(4)), 'file:other');
        assert.equal(await store.ledger.reverse('file:q2', 'withdrawal:w1'), 'reversed');

        const listed = async (
          scope: Parameters<typeof store.ledger.fileUploads>[1],
          page = { limit: 10, offset: 0 },
        ) => {
          const { items, total } = await store.ledger.fileUploads(entry.fileId, scope, page);
          return { keys: items.map((u) => [u.key, u.counts]), total };
        };
        assert.deepEqual(await listed(undefined), {
          keys: [
            ['file:q2', false],
            ['tus:d1', true],
            ['file:q1', true],
          ],
          total: 3,
        });
        assert.deepEqual(await listed({ unitId: 'unit-q' }), {
          keys: [
            ['file:q2', false],
            ['file:q1', true],
          ],
          total: 2,
        });
        assert.deepEqual(await listed({ subtree: { city: '沧州市', county: '东光县' } }), {
          keys: [['tus:d1', true]],
          total: 1,
        });
        assert.deepEqual(await listed({ subtree: { city: '沧州市', county: '青县', town: 'unit-q镇' } }), {
          keys: [
            ['file:q2', false],
            ['file:q1', true],
          ],
          total: 2,
        });
        assert.deepEqual(await listed({ subtree: { city: '廊坊市' } }), { keys: [], total: 0 });
        assert.deepEqual(await listed(undefined, { limit: 1, offset: 1 }), { keys: [['tus:d1', true]], total: 3 });

        const { items } = await store.ledger.fileUploads(entry.fileId, { unitId: 'unit-d' }, { limit: 10, offset: 0 });
        assert.deepEqual(items, [
          {
            key: 'tus:d1',
            accountId: east.id,
            userName: 'clerk-d',
            unitId: 'unit-d',
            unit: east.unit,
            fileId: entry.fileId,
            fileName: '东光/扫描.pdf',
            fileLength: 1,
            at: day(2),
            counts: true,
          },
        ]);
        assert.deepEqual(
          await store.ledger.fileUploads('000000000000000000000000', undefined, { limit: 10, offset: 0 }),
          {
            items: [],
            total: 0,
          },
        );
      });
    });
  });
}

/**
 * The ledger's seeding (seeding.ts), what the benchmarks fill a store with: the same uploads
 * seeded into one store and counted one by one through `Ledger.count` into another of the same
 * adapter leave the same ledger, totals and answers (run against each adapter by test/store/).
 */
export function ledgerSeedingConformance(target: StoreTarget): void {
  describe(`ledger seeding conformance: ${target.name}`, { skip: target.skip }, () => {
    let counted: OpenedStore;
    let seeded: OpenedStore;
    useFreshStore(target, (opened) => (counted = opened));
    useFreshStore(target, (opened) => (seeded = opened));

    /**
     * Seeds the catalog of both stores, and the uploads into `seeded`'s ledger; counts them into
     * `counted`'s. Uploads with a key are seeded with their record (seeding.ts, SeededUpload) and
     * counted under it; those with a withdrawal too are then withdrawn from `counted` by
     * `reverseMany`, in order, as a withdrawal of them all would.
     */
    async function fill(uploads: SeededUpload[]): Promise<SeededLedger> {
      let answer: SeededLedger | undefined;
      for (const opened of [counted, seeded]) {
        const seeding = await seedingOf(opened);
        try {
          await seeding.catalog.seed(SEEDED_FILES);
          if (opened === seeded) answer = await seeding.ledger.seed(uploads);
        } finally {
          await seeding.close();
        }
      }
      for (const upload of uploads) await counted.store.ledger.count(uploadAction(upload, upload.key));
      const withdrawals = uploads.flatMap((u) =>
        u.withdrawal === undefined ? [] : [{ actionKey: u.key!, changeKey: u.withdrawal }],
      );
      assert.ok((await counted.store.ledger.reverseMany(withdrawals)).every((reversal) => reversal === 'reversed'));
      return answer!;
    }

    it('leaves every entry, total and answer as counting the same uploads one by one does', async () => {
      const uploads = seedingUploads();
      await fill(uploads);
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
      // What it checks is not empty.
      const seen = await observe(counted.store);
      assert.equal(seen.savings.unit.summary.uploads, uploads.length);
      assert.ok(seen.crossUnit.total >= 2 && seen.repeats.total >= 3 && seen.unitFiles.unit.total >= 3);
    });

    it('leaves counting afterwards as it would be: no seeded file is stored again, every total kept', async () => {
      const uploads = seedingUploads();
      await fill(uploads);
      const [, , , , dave] = SEEDING_PEOPLE;
      const newcomer = testAccount({ username: 'newcomer', unit: unit('u-new', '献县') });
      const later = new Date('2026-04-01T03:00:00Z');
      const more = [
        // A new holder carrying the bytes of a file stored already, and of one only claimed before.
        carryingUpload(newcomer, SEEDED_FILES[0]!.fileId, later),
        carryingUpload(newcomer, SEEDED_FILES[2]!.fileId, later),
        // An entry seeded, counted again under another name.
        { ...carryingUpload(dave!, SEEDED_FILES[1]!.fileId, later), fileName: '再次.pdf', carriedBytes: false },
        // The first upload of a file nobody had uploaded: it stores it.
        carryingUpload(newcomer, SEEDED_FILES[5]!.fileId, later),
      ];
      for (const record of more) {
        const action = uploadAction(record, `after:${randomUUID()}`);
        const [a, b] = [await counted.store.ledger.count(action), await seeded.store.ledger.count(action)];
        assert.deepEqual(b, a);
      }
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
    });

    it('records the uploads seeded under keys as counting records them: reversed and restored alike', async () => {
      const uploads = seedingUploads().map((u, i) => ({ ...u, key: `seed:${String(i).padStart(4, '0')}` }));
      await fill(uploads);
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
      const keys = uploads.map((u) => u.key);
      assert.deepEqual(
        [...(await seeded.store.ledger.recordedUploads(keys)).values()],
        [...(await counted.store.ledger.recordedUploads(keys)).values()],
      );
      // Every other upload withdrawn, the first of each file among them (those that stored them).
      const changes = keys
        .filter((_, i) => i % 2 === 0)
        .map((actionKey) => ({ actionKey, changeKey: `w:${actionKey}` }));
      const [a, b] = [await counted.store.ledger.reverseMany(changes), await seeded.store.ledger.reverseMany(changes)];
      assert.deepEqual(b, a);
      assert.ok(a.every((answer) => answer === 'reversed'));
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
      const restores = changes.map((c) => ({ ...c, changeKey: `r:${c.actionKey}` }));
      assert.deepEqual(
        await seeded.store.ledger.restoreMany(restores),
        await counted.store.ledger.restoreMany(restores),
      );
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
      // A retry of a seeded action is answered as counted, and counts nothing.
      const retry = uploadAction(uploads[3]!, uploads[3]!.key);
      assert.deepEqual(await seeded.store.ledger.count(retry), await counted.store.ledger.count(retry));
    });

    it('withdraws the uploads seeded to be withdrawn as reversing them after counting them all does', async () => {
      // Every third upload withdrawn (the first of f0, the one that stored it, among them), and
      // every upload of f4 (its entry, tally and name gone).
      const uploads: SeededUpload[] = seedingUploads().map((u, i) => {
        const key = `seed:${String(i).padStart(4, '0')}`;
        const withdrawn = i % 3 === 0 || u.fileId === SEEDED_FILES[4]!.fileId;
        return { ...u, key, ...(withdrawn ? { withdrawal: `w:${key}` } : {}) };
      });
      const withdrawn = uploads.filter((u) => u.withdrawal !== undefined);
      const answer = await fill(uploads);
      assert.deepEqual(
        [answer.uploads, answer.recorded, answer.withdrawn],
        [uploads.length, uploads.length, withdrawn.length],
      );
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
      const changes = withdrawn.map((u) => ({ actionKey: u.key!, changeKey: u.withdrawal! }));
      const seen = await observe(counted.store);
      assert.equal(seen.savings.unit.summary.uploads, uploads.length - withdrawn.length);
      // Withdrawn once: asked again under the same keys, a repeat; restored, as if never withdrawn.
      assert.deepEqual(
        await seeded.store.ledger.reverseMany(changes),
        changes.map(() => 'repeated'),
      );
      const restores = changes.map((c) => ({ ...c, changeKey: `r:${c.actionKey}` }));
      assert.deepEqual(
        await seeded.store.ledger.restoreMany(restores),
        await counted.store.ledger.restoreMany(restores),
      );
      assert.deepEqual(await observe(seeded.store), await observe(counted.store));
    });

    it('refuses to seed a ledger that has entries', async () => {
      await fill(seedingUploads().slice(0, 2));
      const seeding = await seedingOf(seeded);
      try {
        await assert.rejects(seeding.ledger.seed(seedingUploads()), /empty ledger/);
      } finally {
        await seeding.close();
      }
    });
  });
}

/** The catalogued files of the seeding checks: the last two share an MD5 (a collision), the last is never uploaded. */
const SEEDED_FILES: SeededCatalogEntry[] = Array.from({ length: 6 }, (_, i) => ({
  fileId: randomBytes(12).toString('hex'),
  key: {
    md5: (i >= 4 ? 'c' : String(i)).repeat(32),
    sha256: String(i).repeat(64),
    length: 1000 * (i + 1),
  },
  fileName: `文件${i}.pdf`,
  contentType: 'application/pdf',
  uploadDate: new Date(Date.UTC(2026, 2, 1, i)),
}));

/** Who uploads: two clerks of one town, one of them in another town too, a county's and a city's own. */
const SEEDING_PEOPLE = (() => {
  const alice = testAccount({ username: 'alice', unit: unit('u-q', '青县') });
  return [
    alice,
    { ...alice, unit: { ...unit('u-j', '青县'), coordinates: [116.5, 38.6] as [number, number] } },
    testAccount({ username: 'bob', unit: unit('u-q', '青县') }),
    testAccount({ username: 'carol', unit: { id: 'c-dg', geoType: 'county', city: '沧州市', county: '东光县' } }),
    testAccount({ username: 'dave', unit: { id: 'city', geoType: 'city', city: '沧州市' } }),
  ];
})();

/**
 * Uploads in the order they are counted: files stored by a carrying first upload or never (an
 * instant upload first), repeats on one day and on others, under other names, one counted after a
 * later one (its time earlier), a name two clerks of a unit share, a file of four units.
 */
function seedingUploads(): UploadRecord[] {
  const [alice, aliceInJ, bob, carol, dave] = SEEDING_PEOPLE as [Account, Account, Account, Account, Account];
  const [f0, f1, f2, f3, f4] = SEEDED_FILES.map((f) => f.fileId) as [string, string, string, string, string];
  const at = (iso: string) => new Date(iso);
  const u = (
    account: Account,
    fileId: string,
    when: string,
    fileName: string,
    carriedBytes = false,
    contentType = 'application/pdf',
  ): UploadRecord => ({
    account,
    fileId,
    fileName,
    contentType,
    at: at(when),
    day: when.slice(0, 10),
    fileLength: SEEDED_FILES.find((f) => f.fileId === fileId)!.key.length,
    carriedBytes,
  });
  return [
    u(alice, f0, '2026-03-02T01:00:00Z', '通知.pdf', true),
    u(alice, f0, '2026-03-02T02:00:00Z', '通知.pdf', true),
    u(bob, f0, '2026-03-02T03:00:00Z', '通知.pdf'),
    u(aliceInJ, f0, '2026-03-03T01:00:00Z', '副本/通知.pdf'),
    u(carol, f0, '2026-03-04T01:00:00Z', '东光/通知.pdf', true),
    u(dave, f0, '2026-03-09T01:00:00Z', '市/通知.pdf'),
    u(alice, f0, '2026-03-10T01:00:00Z', '通知(2).pdf', true),
    // Counted after alice's upload of 03-10, but sent 03-05: the later time stays the last.
    u(alice, f0, '2026-03-05T01:00:00Z', '通知(3).pdf'),
    u(dave, f1, '2026-03-02T05:00:00Z', '请示.docx', true, 'application/msword'),
    u(dave, f1, '2026-03-16T05:00:00Z', '请示-终稿.docx', false, 'application/msword'),
    u(bob, f1, '2026-03-16T06:00:00Z', '请示.docx'),
    // An instant upload first: no later upload stores the file.
    u(carol, f2, '2026-03-03T08:00:00Z', '批复.pdf'),
    u(bob, f2, '2026-03-03T09:00:00Z', '批复.pdf', true),
    u(bob, f2, '2026-03-03T10:00:00Z', '批复.pdf', true),
    u(alice, f3, '2026-03-20T23:30:00Z', '照片.jpg', true, 'image/jpeg'),
    u(aliceInJ, f3, '2026-03-21T00:30:00Z', '照片.jpg', false, 'image/jpeg'),
    u(carol, f4, '2026-03-22T01:00:00Z', '碰撞.bin', true, 'application/octet-stream'),
    u(carol, f4, '2026-03-22T02:00:00Z', '碰撞.bin', false, 'application/octet-stream'),
  ];
}

/** Everything a store answers of the seeding checks' files: the ledger's, the reports', the unit files listing's. */
async function observe(store: ArchiveStore) {
  const reports = new ReportService(store.reports, new ReportCalendar('UTC'), store.accounts);
  const files = SEEDED_FILES.map((f) => f.fileId);
  const units = ['u-q', 'u-j', 'c-dg', 'city', 'u-new', 'u-none'];
  const subtrees = [
    { city: '沧州市' },
    { city: '沧州市', county: '青县' },
    { city: '沧州市', county: '青县', town: 'u-j镇' },
  ];
  const list = (q: Omit<UnitFilesQuery, 'limit' | 'offset'>) => store.unitFiles.list({ limit: 50, offset: 0, ...q });
  return {
    entries: await Promise.all(files.map((f) => store.ledger.entriesForFile(f))),
    latest: await Promise.all(
      files.flatMap((f) => [
        ...units.map((unitId) => store.ledger.latestUnitUpload(unitId, f)),
        ...subtrees.map((subtree) => store.ledger.latestUploadInScope(f, { subtree })),
      ]),
    ),
    inScope: await Promise.all(
      files.flatMap((f) => [
        ...units.map((unitId) => store.ledger.hasUploadInScope(f, { unitId })),
        store.ledger.hasUploadInScope(f, { city: '沧州市', county: null }),
        store.ledger.hasUploadInScope(f, { city: '沧州市', county: '青县' }),
      ]),
    ),
    uploaders: await Promise.all(
      [undefined, { unitId: 'u-q' }, { subtree: subtrees[1]! }].map((s) => store.ledger.uploaders(s)),
    ),
    savings: {
      unit: await reports.savings(savingsQuery.parse({})),
      county: await reports.savings(savingsQuery.parse({ city: '沧州市', county: '青县' })),
      day: await reports.savings(savingsQuery.parse({ group: 'day' })),
      week: await reports.savings(savingsQuery.parse({ group: 'week', from: '2026-03-03', to: '2026-03-16' })),
      month: await reports.savings(savingsQuery.parse({ group: 'month' })),
    },
    repeats: await reports.repeatUploaders(repeatUploadersQuery.parse({})),
    repeatGroups: await Promise.all(
      [{ group: 'user' }, { group: 'unit' }, { q: '通知' }, { from: '2026-03-06', to: '2026-03-31' }].map((q) =>
        reports.repeatUploaders(repeatUploadersQuery.parse(q)),
      ),
    ),
    crossUnit: await reports.crossUnit(crossUnitQuery.parse({})),
    crossUnitFiltered: await Promise.all(
      [
        { sort: 'uploads' },
        { city: '沧州市', county: '青县' },
        { from: '2026-03-03', to: '2026-03-09' },
        { q: '通知' },
      ].map((q) => reports.crossUnit(crossUnitQuery.parse(q))),
    ),
    collisions: await reports.collisions(collisionsQuery.parse({})),
    unitFiles: {
      unit: await list({ unitId: 'u-q', accountId: SEEDING_PEOPLE[0]!.id }),
      named: await list({ unitId: 'u-q', accountId: SEEDING_PEOPLE[0]!.id, nameContains: '(2)' }),
      county: await list({ subtree: subtrees[1]!, accountId: 'nobody', sort: 'unitCount' }),
      archive: await list({ accountId: SEEDING_PEOPLE[2]!.id, sort: 'name' }),
      searched: await list({ accountId: 'nobody', nameContains: '副本' }),
    },
  };
}
