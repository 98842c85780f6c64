import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { MongoClient, type CommandStartedEvent, type Document } from 'mongodb';
import { auditCollections } from '../../server/store/mongo/audit-documents.js';
import { catalogCollections } from '../../server/store/mongo/catalog-documents.js';
import { ledgerCollections } from '../../server/store/mongo/ledger-documents.js';
import { MongoUnitFiles } from '../../server/store/unit-files/mongo.js';
import type { SeededUpload } from '../../server/store/ledger/seeding.js';
import { carryingUpload, testAccount, unit } from '../support/content.js';
import { seedingOf, type SeededCatalogEntry } from '../support/seeding.js';
import { mongoTarget, withMongoStore } from '../support/stores.js';

/**
 * 本单位文件's name search over the whole archive on MongoDB starts from what matches: the names
 * containing the text (`userInfo.names`, index `name`) and the catalog entries whose first name
 * contains it (index `listing_name`), never from every catalog entry with a lookup each (which
 * made a province's search millions of lookups). The driver's command monitoring shows every
 * command the search sends: a fixed few, each pipeline's first stage a match on the text.
 */
const FILES = 2000;

describe('MongoDB: the whole archive searched by name', { skip: mongoTarget.skip }, () => {
  it(`finds 4 of ${FILES} contents in a fixed few commands, each starting from the matches`, async () => {
    await withMongoStore(async (opened) => {
      const clerk = testAccount({ username: 'clerk', unit: unit('u-a') });
      const at = new Date('2026-03-02T08:00:00Z');
      const entry = (i: number, fileName: string): SeededCatalogEntry => ({
        fileId: randomBytes(12).toString('hex'),
        key: { md5: randomBytes(16).toString('hex'), sha256: randomBytes(32).toString('hex'), length: 1000 + i },
        fileName,
        contentType: 'application/pdf',
        uploadDate: new Date(at.getTime() + i * 1000),
      });
      const files = Array.from({ length: FILES }, (_, i) => entry(i, `文书档案/第${i}卷.pdf`));
      // Two found by an uploaded name, one by its first name only, one by both.
      const [byName1, byName2, byFirst, byBoth] = [
        entry(FILES, 'scan-1.pdf'),
        entry(FILES + 1, 'scan-2.pdf'),
        entry(FILES + 2, '会议纪要-初稿.pdf'),
        entry(FILES + 3, '会议纪要.pdf'),
      ];
      const uploads: SeededUpload[] = [
        ...files.map((f) => ({ ...carryingUpload(clerk, f.fileId, f.uploadDate), fileName: f.fileName })),
        { ...carryingUpload(clerk, byName1.fileId, at), fileName: '2026/会议纪要-一.pdf' },
        { ...carryingUpload(clerk, byName2.fileId, at), fileName: '2026/会议纪要-二.pdf' },
        { ...carryingUpload(clerk, byBoth.fileId, at), fileName: '会议纪要.pdf' },
      ];
      const seeding = await seedingOf(opened);
      try {
        await seeding.catalog.seed([...files, byName1, byName2, byFirst, byBoth]);
        await seeding.ledger.seed(uploads);
      } finally {
        await seeding.close();
      }

      const client = await MongoClient.connect(opened.mongo!.uri, { monitorCommands: true });
      const sent: CommandStartedEvent[] = [];
      client.on('commandStarted', (e: CommandStartedEvent) => {
        if (!['getMore', 'killCursors', 'endSessions'].includes(e.commandName)) sent.push(e);
      });
      try {
        const db = client.db(opened.mongo!.dbName);
        const unitFiles = new MongoUnitFiles({
          ...catalogCollections(db),
          ...ledgerCollections(db),
          ...auditCollections(db),
        });
        const found = await unitFiles.list({ accountId: clerk.id, nameContains: '会议纪要', limit: 10, offset: 0 });
        assert.equal(found.total, 4);
        assert.deepEqual(
          found.items.map((i) => i.entry.fileId).sort(),
          [byName1, byName2, byFirst, byBoth].map((f) => f.fileId).sort(),
        );

        // The search: its counts and pages (four aggregations), then the page's sums, names, uploaders.
        const searching = sent.filter((e) => e.commandName === 'aggregate' && !isPageOnly(e.command));
        assert.ok(sent.length <= 8, `${sent.length} commands: ${sent.map((e) => e.commandName).join(', ')}`);
        assert.ok(searching.length > 0);
        for (const e of searching) {
          const first = (e.command.pipeline as Document[])[0]!;
          assert.ok(
            '$match' in first && /会议纪要/.test(JSON.stringify(first.$match, regexText)),
            `${e.command.aggregate as string} starts from the matches, not from ${JSON.stringify(first, regexText)}`,
          );
        }
      } finally {
        await client.close();
      }
    });
  });
});

/** What is read for the page's files only (their ids given): the sums, names and uploaders shown. */
function isPageOnly(command: Document): boolean {
  const first = (command.pipeline as Document[])[0];
  return JSON.stringify(first?.$match ?? {}).includes('"$in"');
}

/** RegExps as their source text in JSON (JSON.stringify makes them `{}`). */
function regexText(_key: string, value: unknown): unknown {
  return value instanceof RegExp ? value.source : value;
}
