import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FingerprintFailure, FingerprintPool } from '../../client/importer/fingerprints.js';

const KEEP = 4 * 1024 * 1024;

describe('importer fingerprint pool', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-fingerprints-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, bytes: Buffer) => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, bytes);
    return at;
  };
  const md5 = (bytes: Uint8Array) => createHash('md5').update(bytes).digest('hex');

  it('answers each of many small files waiting together with its own digests and bytes', async () => {
    // One thread and 40 files asked at once: they reach it in groups.
    const pool = new FingerprintPool(1);
    try {
      const contents = Array.from({ length: 40 }, (_, i) => randomBytes(1 + i * 331));
      const names = contents.map((bytes, i) => file(`小文件-${i}.pdf`, bytes));
      const prints = await Promise.all(names.map((name) => pool.fingerprint(name, undefined, KEEP)));
      prints.forEach((print, i) => {
        assert.equal(print.md5, md5(contents[i]!), `file ${i}`);
        assert.equal(print.sha256, createHash('sha256').update(contents[i]!).digest('hex'));
        assert.equal(print.size, contents[i]!.byteLength);
        assert.deepEqual(Buffer.from(print.bytes!), contents[i]);
      });
    } finally {
      await pool.close();
    }
  });

  it('fails only the file that cannot be read among those sent together', async () => {
    const pool = new FingerprintPool(1);
    try {
      const good = randomBytes(1000);
      const asked = [file('a', good), path.join(dir, 'gone'), file('b', good)].map((name) =>
        pool.fingerprint(name, undefined, KEEP).then(
          (print) => print.md5,
          (err: unknown) => err,
        ),
      );
      const [a, gone, b] = await Promise.all(asked);
      assert.equal(a, md5(good));
      assert.equal(b, md5(good));
      assert.ok(gone instanceof FingerprintFailure, String(gone));
    } finally {
      await pool.close();
    }
  });

  it('reports a large file’s progress while small ones queued behind it wait their turn', async () => {
    const pool = new FingerprintPool(1);
    try {
      const large = randomBytes(40 * 1024 * 1024);
      const small = randomBytes(10);
      let progress = 0;
      const [big, little] = await Promise.all([
        pool.fingerprint(file('large.tif', large), (hashed) => (progress = hashed)),
        pool.fingerprint(file('small.pdf', small), undefined, KEEP),
      ]);
      assert.equal(big.md5, md5(large));
      assert.equal(big.bytes, undefined, 'a large file is not kept');
      assert.ok(progress > 0, 'progress reported');
      assert.equal(little.md5, md5(small));
    } finally {
      await pool.close();
    }
  });
});
