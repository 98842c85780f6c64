import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/** The repository, from dist/test/. */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * The benchmarks fill a store through its seeding modules (server/store/catalog/seeding.ts,
 * ledger/seeding.ts; the conformance suites check them against counting), never by writing its
 * tables: the lint's rule for bench/ (eslint.config.js, benchSeedingConfig), asked about code
 * here and about bench/ as it is.
 */
describe('the benchmarks seed a store only through its seeding modules, as the lint checks', () => {
  let eslint: ESLint;

  before(async () => {
    const { benchSeedingConfig } = await import(pathToFileURL(path.join(ROOT, 'eslint.config.js')).href);
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: true,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, benchSeedingConfig],
    });
  });

  /** The rules the lint says a benchmark at bench/probe.ts breaks (only these rules are on). */
  async function broken(code: string, file = 'bench/probe.ts'): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    // Directives for rules not on here are not what is asked.
    return result!.messages.filter((m) => m.ruleId !== null).map((m) => m.ruleId!);
  }

  it('refuses SQL that writes a table or the schema, in a string or a template', async () => {
    for (const sql of [
      `'INSERT INTO ledger (user_id) VALUES (?)'`,
      '`INSERT OR IGNORE INTO ledger_names (unit_id) VALUES (${1})`',
      `"UPDATE catalog SET md5_collision = 1"`,
      `'DELETE FROM upload_days'`,
      '`DROP INDEX ${"ledger_file"}`',
      `'DROP TRIGGER ledger_files_insert'`,
      `'CREATE INDEX x ON ledger (file_no)'`,
    ])
      assert.deepEqual(await broken(`export const sql = ${sql};\n`), ['no-restricted-syntax'], sql);
  });

  it('refuses the MongoDB driver', async () => {
    assert.deepEqual(await broken(`import { MongoClient } from 'mongodb';\nexport const c = MongoClient;\n`), [
      'no-restricted-imports',
    ]);
  });

  it('lets a benchmark read a table to measure it, and say "delete" or "update" in prose', async () => {
    assert.deepEqual(await broken(`export const sql = 'SELECT SUM(upload_count) FROM ledger';\n`), []);
    assert.deepEqual(await broken(`export const words = 'DELETE /api/tus/x, then UPDATE the page';\n`), []);
    assert.deepEqual(
      await broken(`export const sql = 'INSERT INTO ledger';\n`, 'test/probe.ts'),
      [],
      'tests: not bench/',
    );
  });

  it('holds for every benchmark as it is', async () => {
    const files = (fs.readdirSync(path.join(ROOT, 'bench'), { recursive: true }) as string[]).filter((f) =>
      f.endsWith('.ts'),
    );
    assert.ok(files.includes('seed.ts') && files.includes('unit-files.ts'));
    for (const file of files) {
      const code = fs.readFileSync(path.join(ROOT, 'bench', file), 'utf8');
      assert.deepEqual(await broken(code, path.join('bench', file)), [], file);
    }
  });
});
