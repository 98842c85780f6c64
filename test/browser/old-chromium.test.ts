import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FileList, UploadResult } from '../../shared/schemas.js';
import { OLD_CHROMIUM_VERSIONS, oldChromiumSkip, OldChromiumPage } from '../support/old-chromium.js';
import { body, PASSWORD, TestServer, type Client } from '../support/server.js';
import { embeddedTarget, tempDir } from '../support/stores.js';
import { typedPdf } from '../support/content.js';

/**
 * The clerk's page in the browsers of county offices: Chromium 86 (360安全浏览器 13 极速模式) and 109
 * (the last Chrome on Windows 7), as npm packages ship them (`.ci/old-chromium`), against a real
 * server on the embedded store. A clerk logs in and uploads files that are new, identical to each
 * other, already in the archive (proved, 秒传) and large (tus); the archive then holds each once
 * and counts each upload once; the viewer of 本单位文件 shows a PDF's pages; the page reported no error.
 */

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');

describe('the clerk’s page in Chromium 86 and 109', { skip: oldChromiumSkip, timeout: 600_000 }, () => {
  let server: TestServer;
  let files: string;
  let known: Uint8Array;
  let knownId: string;

  before(async () => {
    server = await TestServer.start(embeddedTarget, { maxFileSize: 64 * 1024 * 1024 });
    files = tempDir('archive-old-chromium-');
    // Another unit's clerk stored this one already: the old browsers prove it instead of sending it.
    const elsewhere = await server.tokenClient(await server.addAccount('other-clerk', 'clerk', 'unit-b'));
    known = randomBytes(300_000);
    knownId = (await body<UploadResult>(await elsewhere.upload('已归档.pdf', known), 201)).fileId;
  });
  after(async () => {
    await server?.close();
    fs.rmSync(files, { recursive: true, force: true });
  });

  async function filesNamed(client: Client, part: string) {
    const list = await body<FileList>(await client.fetch(`/api/files?limit=50&q=${encodeURIComponent(part)}`), 200);
    return new Map(list.items.map((f) => [f.fileMD5, f]));
  }

  for (const version of OLD_CHROMIUM_VERSIONS) {
    it(`Chromium ${version}: log in, upload new, identical, known and large files; each counted once; a PDF's pages in the viewer; no page error`, async () => {
      const username = `clerk-${version}`;
      const clerk = await server.tokenClient(await server.addAccount(username, 'clerk'));
      const dir = path.join(files, version);
      fs.mkdirSync(dir);
      const page1 = randomBytes(200_000);
      const chosen = {
        [`第1页-${version}.pdf`]: page1,
        [`第1页副本-${version}.pdf`]: page1,
        [`已归档-${version}.pdf`]: known,
        [`全卷-${version}.tif`]: randomBytes(20 * 1024 * 1024),
      };
      for (const [name, data] of Object.entries(chosen)) fs.writeFileSync(path.join(dir, name), data);

      // A real PDF of the clerk's, for the viewer.
      const listName = `目录_${version}.pdf`;
      await body(await clerk.upload(listName, await typedPdf(2)), 201);

      const page = await OldChromiumPage.launch(version);
      try {
        const agent = await page.evaluate<string>('navigator.userAgent');
        assert.match(agent, new RegExp(`Chrome/${version}\\.`));
        await page.navigate(server.url);
        await page.waitFor('document.querySelector("input[name=username]")', 'the login form');
        await page.evaluate(`(() => {
          const form = document.querySelector('input[name=username]').form;
          form.elements.username.value = ${JSON.stringify(username)};
          form.elements.password.value = ${JSON.stringify(PASSWORD)};
          form.requestSubmit();
        })()`);
        await page.waitFor('document.querySelector("input[type=file]:not([webkitdirectory])")', 'the upload page');
        await page.setFiles(
          'input[type=file]:not([webkitdirectory])',
          Object.keys(chosen).map((name) => path.join(dir, name)),
        );
        const summary = await page.waitFor<{ instant: string; stored: string; failed: string; total: string }>(
          `(() => { const s = document.querySelector('.results .summary');
            return s && s.dataset.total === '4' && +s.dataset.instant + +s.dataset.stored + +s.dataset.failed === 4
              ? { ...s.dataset } : undefined; })()`,
          'the four files to finish',
          300_000,
        );
        assert.equal(summary.failed, '0', `failed uploads; page errors: ${page.errors.join(' | ')}`);
        assert.ok(Number(summary.instant) >= 1, `the known file was proved, not sent: ${JSON.stringify(summary)}`);
        assert.deepEqual(page.errors, []);

        // A PDF in 本单位文件's viewer: its pages as the server draws them (today's pdf.js cannot run here).
        await page.evaluate(`location.hash = '#/files'`);
        const preview = `Array.from(document.querySelectorAll('button[aria-label^="预览"]')).find((b) => b.getAttribute('aria-label').includes(${JSON.stringify(listName)}))`;
        await page.waitFor(preview, 'the PDF in the list of files');
        await page.evaluate(`${preview}.click()`);
        const shown = await page.waitFor<number>(
          `(() => { const img = document.querySelector('dialog.preview .pdf-pages[data-page="1"] img');
            return img && img.complete && img.naturalWidth > 0 ? img.naturalWidth : undefined; })()`,
          'the PDF’s first page in the viewer',
          60_000,
        );
        assert.ok(shown >= 200, `the page is drawn ${shown} pixels wide`);
        assert.equal(await page.evaluate<boolean>(`!!document.querySelector('dialog.preview [role=alert]')`), false);
        assert.deepEqual(page.errors, []);
      } finally {
        await page.close();
      }

      // What the archive holds now: one content per distinct file, each of the clerk's uploads
      // counted once, the known one proved against the other unit's copy, not stored again.
      const held = await filesNamed(clerk, `-${version}.`);
      assert.equal(held.size, 3);
      assert.equal(held.get(md5(page1))?.myUploadCount, 2);
      assert.equal(held.get(md5(known))?.fileId, knownId);
      assert.equal(held.get(md5(known))?.myUploadCount, 1);
      assert.equal(held.get(md5(chosen[`全卷-${version}.tif`]!))?.fileLength, 20 * 1024 * 1024);
    });
  }
});
