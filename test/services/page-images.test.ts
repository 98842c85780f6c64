import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BadRequestError, NotFoundError, RateLimitedError } from '../../server/errors.js';
import { PageImages } from '../../server/services/page-images.js';
import { typedPdf } from '../support/content.js';

const fileOf = (name: string, bytes: Uint8Array) => ({
  key: name,
  name,
  length: bytes.byteLength,
  read: async function* () {
    yield bytes;
  },
});

/** A file that counts how often its bytes are read. */
function countedFile(name: string, bytes: Uint8Array) {
  const file = { ...fileOf(name, bytes), reads: 0 };
  file.read = async function* () {
    file.reads++;
    yield bytes;
  };
  return file;
}

describe('drawing pages for the viewer', () => {
  it('refuses a file over its limit without reading it, and more pages waiting than it keeps, for a moment', async () => {
    const pages = new PageImages({ maxBytes: 4096, maxWaiting: 1, idleMs: 60_000 });
    try {
      const unread = {
        key: '大.pdf',
        name: '大.pdf',
        length: 5000,
        read: () => assert.fail('a file too large is not read'),
      };
      await assert.rejects(pages.draw(unread, 1, 200), (e: unknown) => {
        assert.ok(e instanceof BadRequestError);
        assert.match(
          e.message,
          /"大.pdf" is too large to show here \(0.0 MiB; at most 0.0 MiB\)|too large to show here/,
        );
        return true;
      });
      const pdf = await typedPdf(1);
      // One drawn, one waiting: the third is refused (429), the two others are drawn.
      const drawing = [pages.draw(fileOf('a.pdf', pdf), 1, 200), pages.draw(fileOf('b.pdf', pdf), 1, 200)];
      await assert.rejects(pages.draw(fileOf('c.pdf', pdf), 1, 200), RateLimitedError);
      for (const drawn of await Promise.all(drawing)) assert.equal(drawn.pages, 1);
      assert.equal((await pages.draw(fileOf('d.pdf', pdf), 1, 200)).pages, 1, 'accepted again once drawn');
    } finally {
      await pages.close();
    }
  });

  it('ends its thread when idle, the files it kept open with it, and starts another for the next page', async () => {
    const pages = new PageImages({ maxBytes: 1 << 20, maxWaiting: 4, idleMs: 0 });
    try {
      const a = countedFile('a.pdf', await typedPdf(2));
      const first = await pages.draw(a, 2, 150);
      assert.deepEqual([first.pages, first.jpeg[0], first.jpeg[1]], [2, 0xff, 0xd8]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((pages as unknown as { worker: unknown }).worker, undefined, 'the idle thread ended');
      assert.equal((await pages.draw(a, 1, 150)).pages, 2);
      assert.equal(a.reads, 2, 'read again by the new thread');
    } finally {
      await pages.close();
    }
  });

  it('keeps the files last drawn from open, as many and as large as it may: the oldest is closed first', async () => {
    const [one, two] = [await typedPdf(2, 'One'), await typedPdf(3, 'Two')];
    const byCount = new PageImages({ kept: { files: 1, bytes: 1 << 20 } });
    try {
      const [a, b] = [countedFile('a.pdf', one), countedFile('b.pdf', two)];
      await byCount.draw(a, 1, 150);
      assert.equal((await byCount.draw(a, 2, 150)).pages, 2);
      assert.equal(a.reads, 1, 'the next page of a file kept open: not read again');
      assert.equal((await byCount.draw(b, 3, 150)).pages, 3);
      await byCount.draw(a, 1, 150);
      assert.deepEqual([a.reads, b.reads], [2, 1], 'one file kept: the other closed for it, and read again');
      // A file kept open is asked for a page it does not have as one read is.
      await assert.rejects(byCount.draw(a, 3, 150), NotFoundError);
      assert.equal(a.reads, 2);
    } finally {
      await byCount.close();
    }
    const byBytes = new PageImages({ kept: { files: 4, bytes: one.byteLength + two.byteLength - 1 } });
    try {
      const [a, b] = [countedFile('a.pdf', one), countedFile('b.pdf', two)];
      await byBytes.draw(a, 1, 150);
      await byBytes.draw(b, 1, 150);
      await byBytes.draw(b, 2, 150);
      await byBytes.draw(a, 2, 150);
      assert.deepEqual([a.reads, b.reads], [2, 1], 'both would be more bytes than it keeps: the older closed');
    } finally {
      await byBytes.close();
    }
  });
});
