import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { clientAppRoutes, DEFAULT_CLIENT_DIR } from '../../server/http/routes/client-app.js';

describe('the browser app, served from an installation under a dot-folder (~/.local/public)', () => {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'client-app-'));
  const clientDir = path.join(top, '.local', 'public');
  let server: ReturnType<express.Express['listen']>;
  let base = '';

  before(async () => {
    fs.mkdirSync(path.join(clientDir, 'assets'), { recursive: true });
    fs.writeFileSync(path.join(clientDir, 'index.html'), '<!doctype html><title>档案</title>');
    fs.writeFileSync(path.join(clientDir, 'assets', 'app-1.js'), 'console.log(1)');
    const app = express();
    app.use(clientAppRoutes(clientDir));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.close();
    fs.rmSync(top, { recursive: true, force: true });
  });

  it('answers the page and its assets, as anywhere else', async () => {
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /档案/);
    const asset = await fetch(`${base}/assets/app-1.js`);
    assert.equal(asset.status, 200);
  });

  it('still refuses a dot-file asked for under the assets', async () => {
    fs.writeFileSync(path.join(clientDir, 'assets', '.env'), 'SECRET=1');
    const res = await fetch(`${base}/assets/.env`);
    assert.notEqual(res.status, 200);
  });
});

describe('the tab icon of the built app', () => {
  let server: ReturnType<express.Express['listen']>;
  let base = '';
  before(async () => {
    const app = express();
    app.use(clientAppRoutes(DEFAULT_CLIENT_DIR));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('answers /favicon.ico with an icon (browsers ask for it whatever the page links), and the page links an SVG one', async () => {
    const ico = await fetch(`${base}/favicon.ico`);
    assert.equal(ico.status, 200);
    assert.match(ico.headers.get('content-type') ?? '', /^image\/(x-icon|vnd\.microsoft\.icon)/);
    const bytes = Buffer.from(await ico.arrayBuffer());
    assert.deepEqual([...bytes.subarray(0, 4)], [0, 0, 1, 0], 'an ICO file');
    const page = await (await fetch(`${base}/`)).text();
    const linked = /<link rel="icon" href="(\/favicon\.svg)" type="image\/svg\+xml"/.exec(page);
    assert.ok(linked, 'the page links the SVG icon');
    const svg = await fetch(`${base}${linked[1]}`);
    assert.equal(svg.status, 200);
    assert.match(svg.headers.get('content-type') ?? '', /^image\/svg\+xml/);
  });
});
