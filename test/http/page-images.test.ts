import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { PageImages } from '../../server/services/page-images.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { ContentStore } from '../../server/store/content/port.js';
import { typedPdf } from '../support/content.js';
import { Client, rawGet, TestServer } from '../support/server.js';
import { storeTargets } from '../support/stores.js';

/**
 * The viewer's pages, drawn by the server as JPEGs (GET /api/files/:id/pages/:page): a PDF's and a
 * TIFF scan's page by page, a photo as its one page; what cannot be drawn is said plainly.
 */

/** A TIFF of `pages` grey pages, each a shade darker than the last. */
async function tiff(pages: number): Promise<Buffer> {
  const [width, height] = [200, 280];
  const raw = Buffer.concat(Array.from({ length: pages }, (_, i) => Buffer.alloc(width * height, 250 - 60 * i)));
  return sharp(raw, { raw: { width, height: height * pages, channels: 1, pageHeight: height } })
    .tiff({ compression: 'lzw' })
    .toBuffer();
}

const body = async (res: Response) => Buffer.from(await res.arrayBuffer());

for (const target of storeTargets) {
  describe(`pages drawn for the viewer (${target.name} store)`, { skip: target.skip }, () => {
    let server: TestServer;
    let clerk: Client;
    const ids: Record<string, string> = {};
    /** How often each file's bytes were read from the store. */
    const reads = new Map<string, number>();

    before(async () => {
      server = await TestServer.start(target, {
        wrapStore: (store: ArchiveStore) => {
          const content: ContentStore = Object.create(store.content) as ContentStore;
          content.read = (entry, range) => {
            reads.set(entry.fileId, (reads.get(entry.fileId) ?? 0) + 1);
            return store.content.read(entry, range);
          };
          return { ...store, content };
        },
      });
      await server.addAccount('clerk', 'clerk', 'unit-a');
      clerk = await server.login('clerk');
      const upload = async (name: string, data: Uint8Array, type: string) =>
        ((await (await clerk.upload(name, data, {}, type)).json()) as { fileId: string }).fileId;
      ids.pdf = await upload('移交清单.pdf', await typedPdf(2), 'application/pdf');
      ids.tiff = await upload('扫描件.tif', await tiff(3), 'image/tiff');
      ids.photo = await upload(
        '合影.jpg',
        await sharp({ create: { width: 640, height: 480, channels: 3, background: 'teal' } })
          .jpeg()
          .toBuffer(),
        'image/jpeg',
      );
      ids.text = await upload('说明.txt', Buffer.from('不是图片'), 'text/plain');
      ids.broken = await upload('损坏.pdf', Buffer.from('%PDF-1.7\nthis is not a PDF at all'), 'application/pdf');
    });
    after(() => server.close());

    it('draws each page of a PDF as a JPEG as wide as asked, says how many pages there are, and records the view', async () => {
      for (const page of [1, 2]) {
        const res = await clerk.fetch(`/api/files/${ids.pdf}/pages/${page}?width=300`);
        assert.equal(res.status, 200, await res.clone().text());
        assert.deepEqual([res.headers.get('content-type'), res.headers.get('x-page-count')], ['image/jpeg', '2']);
        assert.equal(res.headers.get('content-security-policy'), "default-src 'none'; sandbox");
        const meta = await sharp(await body(res)).metadata();
        assert.deepEqual([meta.format, meta.width], ['jpeg', 300]);
        assert.ok(meta.height > 400, 'an A5 page, taller than wide');
      }
      const { items } = await server.store.audit.search({ action: 'download', limit: 10, offset: 0 });
      const views = items.filter((e) => e.fileId === ids.pdf).map((e) => e.note);
      assert.deepEqual(
        views.map((n) => n && 'page' in n && n.page).sort(),
        [1, 2],
        'each page viewed is in the audit log as a preview of that page',
      );
    });

    it('answers a page seen before with 304 (the same content is drawn the same), and draws pages of a TIFF and a photo', async () => {
      const first = await clerk.fetch(`/api/files/${ids.pdf}/pages/1`);
      const etag = first.headers.get('etag')!;
      assert.ok(etag);
      // fetch() adds "Cache-Control: no-cache" to conditional requests, so ask with plain http.
      const asked = (page: number) =>
        rawGet(`${server.url}/api/files/${ids.pdf}/pages/${page}`, {
          cookie: clerk.credentials.cookie!,
          'if-none-match': etag,
        });
      assert.equal((await asked(1)).status, 304);
      assert.equal((await asked(2)).status, 200, 'another page is another image');

      const third = await clerk.fetch(`/api/files/${ids.tiff}/pages/3?width=100`);
      assert.deepEqual([third.status, third.headers.get('x-page-count')], [200, '3']);
      const { data } = await sharp(await body(third))
        .greyscale()
        .raw()
        .toBuffer({ resolveWithObject: true });
      assert.ok(Math.abs(data[0]! - 130) < 12, `the third page's shade (${data[0]})`);

      const photo = await clerk.fetch(`/api/files/${ids.photo}/pages/1?width=200`);
      assert.deepEqual([photo.status, photo.headers.get('x-page-count')], [200, '1']);
      assert.equal((await sharp(await body(photo)).metadata()).width, 200);
    });

    it('reads a file once while paging through it: the next page is drawn from the file kept open, another file is read', async () => {
      const upload = async (name: string, data: Uint8Array) =>
        ((await (await clerk.upload(name, data, {}, 'application/pdf')).json()) as { fileId: string }).fileId;
      const bytes = await typedPdf(3, 'Paged through');
      const paged = await upload('卷宗.pdf', bytes);
      const other = await upload('另一卷.pdf', await typedPdf(2, 'Another file'));
      const page = async (fileId: string, n: number) => {
        const res = await clerk.fetch(`/api/files/${fileId}/pages/${n}?width=200`);
        assert.equal(res.status, 200, await res.clone().text());
        return body(res);
      };
      const before = reads.get(paged) ?? 0;
      await page(paged, 1);
      assert.equal(reads.get(paged), before + 1, 'read for its first page');
      const third = await page(paged, 3);
      assert.equal(reads.get(paged), before + 1, 'not read again for the next page');
      // The page asked for, drawn as from the file's bytes.
      const fresh = new PageImages();
      try {
        const file = {
          key: 'fresh',
          name: '卷宗.pdf',
          length: bytes.byteLength,
          read: async function* () {
            yield bytes;
          },
        };
        assert.deepEqual(third, Buffer.from((await fresh.draw(file, 3, 200)).jpeg), 'page 3, as drawn from the bytes');
        assert.notDeepEqual(third, Buffer.from((await fresh.draw(file, 1, 200)).jpeg));
      } finally {
        await fresh.close();
      }
      const otherBefore = reads.get(other) ?? 0;
      await page(other, 1);
      assert.equal(reads.get(other), otherBefore + 1, 'another file is read');
      await page(paged, 2);
      assert.equal(reads.get(paged), before + 1, 'two files kept open: the first not read again');
    });

    it('says plainly what cannot be drawn: a page past the end, a text file, a damaged PDF, a bad page or width', async () => {
      const cases: Array<[string, number, RegExp]> = [
        [`/api/files/${ids.pdf}/pages/3`, 404, /has 2 page\(s\); page 3 does not exist/],
        [`/api/files/${ids.photo}/pages/2`, 404, /has 1 page\(s\)/],
        [`/api/files/${ids.text}/pages/1`, 400, /download this file instead/],
        [`/api/files/${ids.broken}/pages/1`, 400, /cannot be shown .*download it instead/],
        [`/api/files/${ids.pdf}/pages/0`, 400, /a page is a whole number from 1/],
        [`/api/files/${ids.pdf}/pages/one`, 400, /a page is a whole number from 1/],
        [`/api/files/${ids.pdf}/pages/1?width=5000`, 400, /width is a whole number of pixels, 100 to 1600/],
        [`/api/files/${ids.pdf}/pages/1?size=big`, 400, /size/],
      ];
      for (const [path, status, message] of cases) {
        const res = await clerk.fetch(path);
        const answer = (await res.json()) as { message: string };
        assert.equal(res.status, status, `${path}: ${answer.message}`);
        assert.match(answer.message, message, path);
      }
      // The server is still there, and draws.
      assert.equal((await clerk.fetch(`/api/files/${ids.pdf}/pages/1?width=100`)).status, 200);
    });
  });
}
