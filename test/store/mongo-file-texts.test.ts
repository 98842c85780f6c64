import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ObjectId } from 'mongodb';
import { commitBytes, randomContent } from '../support/content.js';
import { mongoTarget, withMongoStore } from '../support/stores.js';

describe('MongoDB: texts put for search by content', { skip: mongoTarget.skip }, () => {
  it('puts again a text whose put was cut short after its postings, before its text', async () => {
    await withMongoStore(async ({ store }, db) => {
      const fileId = (await commitBytes(store, randomContent(40), '通知.txt')).entry.fileId;
      // What a put cut short leaves: a posting of the file, no text (postings go first).
      await db.collection('fileTexts.terms').insertOne({ Term: '通知', FileID: new ObjectId(fileId) });
      await store.fileTexts.put([{ fileId, text: '会议通知', terms: ['会议', '通知'] }]);
      const found = await store.fileTexts.search({ terms: ['会议', '通知'], scope: undefined, limit: 10, offset: 0 });
      assert.deepEqual(found.hits, [{ fileId, text: '会议通知' }]);
      assert.equal(await db.collection('fileTexts.terms').countDocuments({ FileID: new ObjectId(fileId) }), 2);
    });
  });
});
