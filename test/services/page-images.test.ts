import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BadRequestError, RateLimitedError } from '../../server/errors.js';
import { PageImages } from '../../server/services/page-images.js';
import { typedPdf } from '../support/content.js';

const fileOf = (name: string, bytes: Uint8Array) => ({
  name,
  length: bytes.byteLength,
  read: async function* () {
    yield bytes;
  },
});

describe('drawing pages for the viewer', () => {
  it('refuses a file over its limit without reading it, and more pages waiting than it keeps, for a moment', async () => {
    const pages = new PageImages({ maxBytes: 4096, maxWaiting: 1, idleMs: 60_000 });
    try {
      const unread = { name: '大.pdf', length: 5000, read: () => assert.fail('a file too large is not read') };
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

  it('ends its thread when idle and starts another for the next page', async () => {
    const pages = new PageImages({ maxBytes: 1 << 20, maxWaiting: 4, idleMs: 0 });
    try {
      const pdf = await typedPdf(2);
      const first = await pages.draw(fileOf('a.pdf', pdf), 2, 150);
      assert.deepEqual([first.pages, first.jpeg[0], first.jpeg[1]], [2, 0xff, 0xd8]);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((pages as unknown as { worker: unknown }).worker, undefined, 'the idle thread ended');
      assert.equal((await pages.draw(fileOf('a.pdf', pdf), 1, 150)).pages, 2);
    } finally {
      await pages.close();
    }
  });
});
