import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { BSON, MongoClient, type CommandStartedEvent, type CommandSucceededEvent, type Document } from 'mongodb';
import { auditCollections } from '../../server/store/mongo/audit-documents.js';
import { catalogCollections } from '../../server/store/mongo/catalog-documents.js';
import { ledgerCollections } from '../../server/store/mongo/ledger-documents.js';
import { pairCollections } from '../../server/store/mongo/pair-documents.js';
import type * as Rows from '../../shared/reports.js';
import { MongoReports } from '../../server/store/reports/mongo.js';
import { MongoUnitFiles } from '../../server/store/unit-files/mongo.js';
import type { SeededUpload } from '../../server/store/ledger/seeding.js';
import { carryingUpload, testAccount, unit } from '../support/content.js';
import { seedingOf, type SeededCatalogEntry } from '../support/seeding.js';
import { mongoTarget, withMongoStore } from '../support/stores.js';

/**
 * MongoDB's documents are at most 16 MiB, and so is every answer that is one document (`distinct`)
 * and every document a pipeline makes (a group's list). The name search's `distinct` of file ids
 * crossed it near 600,000 matching files, a unit's list of its file ids near a million. The
 * emulator has no such limit, and scans where MongoDB would use an index, so the test scales both
 * down by 2048: a limit of 8 KiB (600,000 files become 293) and 1,000 files (a list of their ids
 * is about 17 KB). `MONGO_LIMITS_FILES` runs it with more files and the limit scaled with them
 * (8 KiB per 1,000 files), as far as the emulator holds (docs/decisions/mongo-no-document-lists.md).
 */
const FILES = Number(process.env.MONGO_LIMITS_FILES ?? 1000);
const LIMIT = Math.round((8 * 1024 * FILES) / 1000);

/** Accumulators whose list is bounded by the directory (units, accounts), never by the archive's files. */
const BOUNDED_LISTS = new Set(['$UploadGeography.UploadGeoNameID', '$UserID', '$UserName']);

describe('MongoDB without single-document limits', { skip: mongoTarget.skip }, () => {
  it(`lists, searches and reports ${FILES} files of one unit with no document of ${LIMIT / 1024} KiB or more`, async () => {
    await withMongoStore(async (opened) => {
      // A scanner account sends every file of its unit twice, under long names in one folder; a
      // colleague of another unit sends a few of them too.
      const scanner = testAccount({ username: 'scanner', unit: unit('u-scan') });
      const colleague = testAccount({ username: 'colleague', unit: unit('u-other', '献县') });
      const at = new Date('2026-03-02T08:00:00Z');
      const files: SeededCatalogEntry[] = Array.from({ length: FILES }, (_, i) => ({
        fileId: randomBytes(12).toString('hex'),
        key: { md5: randomBytes(16).toString('hex'), sha256: randomBytes(32).toString('hex'), length: 1000 + i },
        fileName: `扫描件/${'沧州市青县城关镇档案室二〇二六年度文书档案永久卷'.repeat(3)}第${i}页.tif`,
        contentType: 'image/tiff',
        uploadDate: at,
      }));
      const uploads: SeededUpload[] = files.flatMap((f, i) => [
        { ...carryingUpload(scanner, f.fileId, at), fileName: f.fileName, key: `first:${i}` },
        { ...carryingUpload(scanner, f.fileId, new Date(at.getTime() + 60_000)), fileName: f.fileName },
        ...(i < 3 ? [{ ...carryingUpload(colleague, f.fileId, at), fileName: f.fileName }] : []),
      ]);
      const seeding = await seedingOf(opened);
      try {
        await seeding.catalog.seed(files);
        await seeding.ledger.seed(uploads);
      } finally {
        await seeding.close();
      }

      // The store's queries, on a connection that sees every command and answer.
      const client = await MongoClient.connect(opened.mongo!.uri, {
        monitorCommands: true,
        serverSelectionTimeoutMS: 120_000,
      });
      const seen = { largest: 0, command: '', lists: new Set<string>() };
      const measure = (what: string, doc: Document) => {
        const size = BSON.calculateObjectSize(doc);
        if (size > seen.largest) Object.assign(seen, { largest: size, command: what });
      };
      // What is sent is bounded apart from this (a page's ids, a batch of 1000): its lists are checked.
      client.on('commandStarted', (e: CommandStartedEvent) => {
        for (const list of accumulatedLists(e.command)) seen.lists.add(list);
      });
      client.on('commandSucceeded', (e: CommandSucceededEvent) => {
        const reply = e.reply as Document;
        const batch = (reply.cursor as Document | undefined)?.firstBatch ?? (reply.cursor as Document)?.nextBatch;
        if (Array.isArray(batch)) for (const doc of batch as Document[]) measure(`${e.commandName} answered`, doc);
        else measure(`${e.commandName} answered`, reply);
      });
      try {
        const db = client.db(opened.mongo!.dbName);
        const collections = { ...catalogCollections(db), ...ledgerCollections(db), ...auditCollections(db) };
        const unitFiles = new MongoUnitFiles(collections);
        const reports = new MongoReports({ ...collections, ...pairCollections(db) });
        const page = { accountId: scanner.id, limit: 20, offset: 0 };

        const inUnit = await unitFiles.list({ ...page, unitId: 'u-scan', nameContains: '永久卷' });
        assert.equal(inUnit.total, FILES, "the unit's name search");
        assert.equal(inUnit.items.length, 20);
        const all = await unitFiles.list({ ...page, nameContains: '永久卷', sort: 'name', order: 'asc' });
        assert.equal(all.total, FILES, "the whole archive's name search");
        assert.equal(all.items[0]!.entry.fileName, files[0]!.fileName);
        const byScanner = await unitFiles.list({ ...page, uploaderId: scanner.id, sort: 'lastUpload' });
        assert.equal(byScanner.total, FILES, "the whole archive's files of one uploader");
        const folder = await unitFiles.folder({ ...page, unitId: 'u-scan', folder: '扫描件' });
        assert.equal(folder.fileTotal, FILES);
        const sent = await unitFiles.uploads({ unitId: 'u-scan', folder: '扫描件', limit: 5 });
        assert.equal(sent.length, 5, "the folder's upload actions");

        const query = { min: 2, order: 'desc' as const, limit: 10, offset: 0 };
        const units = await reports.repeatUploaders({ ...query, group: 'unit', sort: 'files' });
        assert.deepEqual(
          units.items.map((r) => {
            const row = r as Rows.RepeatUnitRow;
            return [row.users, row.files, row.uploads, row.repeatUploads];
          }),
          [[1, FILES, 2 * FILES, FILES]],
          "the unit's row: one account, every file once, each sent twice",
        );
        const crossUnit = await reports.crossUnit({ ...query, sort: 'units' });
        assert.equal(crossUnit.total, 3);
      } finally {
        await client.close();
      }
      assert.ok(seen.largest < LIMIT, `${seen.command}: a document of ${seen.largest} bytes`);
      assert.deepEqual(
        [...seen.lists].filter((list) => !BOUNDED_LISTS.has(list)),
        [],
        'no pipeline gathers a list of what the archive has without bound (file ids)',
      );
    });
  });
});

/** The operands of every `$addToSet` and `$push` in a command (its pipeline's accumulators). */
function accumulatedLists(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(accumulatedLists);
  if (value === null || typeof value !== 'object' || value instanceof BSON.ObjectId) return [];
  return Object.entries(value as Document).flatMap(([key, inner]) =>
    key === '$addToSet' || key === '$push' ? [JSON.stringify(inner).replace(/^"|"$/g, '')] : accumulatedLists(inner),
  );
}
