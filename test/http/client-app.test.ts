import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import { clientAppRoutes } from '../../server/http/routes/client-app.js';

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
