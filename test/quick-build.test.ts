import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { quickBuild } from './quick-build.js';

/** The repository, from dist/test/. */
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DIST = path.join(ROOT, 'dist');
const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** A source map with its sources as absolute paths (they are written relative to the map). */
function sourceMap(file: string) {
  const map = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { ...map, sources: map.sources.map((s: string) => path.resolve(path.dirname(file), s)) };
}

/**
 * `npm run test:quick` compiles the TypeScript file by file without type checking
 * (test/quick-build.ts); these tests hold it to what `tsc -b` writes. They run in `npm test`, after
 * `npm run build` (`tsc -b`), not in the quick loop, whose dist/ is the quick build's own.
 */
describe("npm run test:quick's build", () => {
  describe('of this project, against the build of npm run build (tsc -b) in dist/', () => {
    const out = tempDir('quick-build-');
    after(() => fs.rmSync(out, { recursive: true, force: true }));
    /** The project's sources in tsc's program: what tsc -b compiled into dist/ (its build info lists them). */
    let tscSources: string[];
    let built: Awaited<ReturnType<typeof quickBuild>>;

    before(async () => {
      const buildInfoFile = path.join(DIST, '.tsbuildinfo');
      assert.ok(fs.existsSync(buildInfoFile), `${buildInfoFile} is missing: run npm run build (npm test does) first`);
      const buildInfo = JSON.parse(fs.readFileSync(buildInfoFile, 'utf8')) as { fileNames: string[] };
      tscSources = buildInfo.fileNames
        .map((f) => path.resolve(DIST, f))
        .filter((f) => !f.endsWith('.d.ts') && !f.includes(`${path.sep}node_modules${path.sep}`))
        .sort();
      const since = fs.statSync(buildInfoFile).mtimeMs;
      const changed = tscSources.filter((f) => fs.statSync(f).mtimeMs > since);
      assert.deepEqual(changed, [], 'sources changed since npm run build: run it again first');
      built = await quickBuild(ROOT, out);
    });

    it("compiles the files of tsc's program: tsconfig.json's and those they import", () => {
      assert.deepEqual(built.files, tscSources);
      assert.deepEqual(built.compiled, tscSources, 'into an empty folder, every one of them');
    });

    it('writes the JavaScript tsc -b writes, byte for byte, and the same source maps', () => {
      for (const source of tscSources) {
        const js = path.relative(ROOT, source).replace(/\.ts$/, '.js');
        assert.equal(fs.readFileSync(path.join(out, js), 'utf8'), fs.readFileSync(path.join(DIST, js), 'utf8'), js);
        assert.deepEqual(sourceMap(path.join(out, `${js}.map`)), sourceMap(path.join(DIST, `${js}.map`)), `${js}.map`);
      }
    });
  });

  describe('of a project of three files', () => {
    let root: string;
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    };
    const js = (file: string) => path.join(root, 'dist', file);

    before(() => {
      root = tempDir('quick-build-project-');
      write('package.json', JSON.stringify({ type: 'module' }));
      write(
        'tsconfig.json',
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            sourceMap: true,
            incremental: true,
            tsBuildInfoFile: 'dist/.tsbuildinfo',
            rootDir: '.',
            outDir: 'dist',
          },
          include: ['src'],
        }),
      );
      write('src/main.ts', `import { total } from '../lib/sum.js';\nexport const answer: number = total([40, 2]);\n`);
      write(
        'lib/sum.ts',
        `import type { Amounts } from './amounts.js';\nexport const total = (a: Amounts) => a.reduce((x, y) => x + y, 0);\n`,
      );
      write('lib/amounts.ts', `export type Amounts = readonly number[];\n`);
    });
    after(() => fs.rmSync(root, { recursive: true, force: true }));

    it('compiles the included files and those they import, even for their types only, as ES modules', async () => {
      const { compiled } = await quickBuild(root);
      assert.deepEqual(
        compiled.map((f) => path.relative(root, f)),
        ['lib/amounts.ts', 'lib/sum.ts', 'src/main.ts'],
      );
      assert.match(fs.readFileSync(js('src/main.js'), 'utf8'), /^import \{ total \} from '\.\.\/lib\/sum\.js';$/m);
      assert.doesNotMatch(fs.readFileSync(js('lib/sum.js'), 'utf8'), /amounts/, 'the type-only import is gone');
      assert.ok(fs.existsSync(js('src/main.js.map')));
    });

    it('compiles again only the files changed since (their output older than them)', async () => {
      assert.deepEqual((await quickBuild(root)).compiled, []);
      const old = new Date(Date.now() - 60_000);
      fs.utimesSync(js('lib/sum.js'), old, old);
      assert.deepEqual((await quickBuild(root)).compiled, [path.join(root, 'lib/sum.ts')]);
    });

    it('compiles everything again when the compiler options change', async () => {
      const config = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
      write('package.json', JSON.stringify({ type: 'module' }));
      write(
        'tsconfig.json',
        JSON.stringify({ ...config, compilerOptions: { ...config.compilerOptions, sourceMap: false } }),
      );
      assert.equal((await quickBuild(root)).compiled.length, 3);
    });

    it("makes tsc -b's next build start afresh once it has compiled something", async () => {
      // tsc -b skips a file whose source is as its build info recorded, whatever its output is now.
      write('dist/.tsbuildinfo', '{}');
      await quickBuild(root);
      assert.ok(fs.existsSync(js('.tsbuildinfo')), 'nothing compiled, the build info kept');
      fs.utimesSync(js('src/main.js'), new Date(0), new Date(0));
      await quickBuild(root);
      assert.equal(fs.existsSync(js('.tsbuildinfo')), false);
    });
  });
});
