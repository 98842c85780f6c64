import assert from 'node:assert/strict';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

/** The repository, from dist/test/. */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * The import boundaries `npm run lint` checks (eslint.boundaries.js), asked about files that are
 * not in the tree: each is linted as if it were at the path given, importing real modules. That
 * the tree itself keeps to them is what `npm run lint` checks.
 */
describe('the import boundaries of docs/architecture.md, as the lint checks them', () => {
  let eslint: ESLint;

  before(async () => {
    const { boundaryConfig } = await import(pathToFileURL(path.join(ROOT, 'eslint.boundaries.js')).href);
    eslint = new ESLint({
      cwd: ROOT,
      overrideConfigFile: true,
      overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, boundaryConfig],
    });
  });

  /** What the lint says of a file at `file` (from the repository's root) that imports `source`. */
  async function complaints(file: string, source: string): Promise<string[]> {
    const [result] = await eslint.lintText(`import { x } from '${source}';\nexport const y = x;\n`, {
      filePath: path.join(ROOT, file),
    });
    return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
  }

  async function assertRefused(file: string, source: string, target: string) {
    assert.deepEqual(
      await complaints(file, source),
      [
        `boundaries/dependencies: import boundary (docs/architecture.md, eslint.boundaries.js): ${file} may not import ${target}`,
      ],
      `${file} importing ${source}`,
    );
  }

  async function assertAllowed(file: string, source: string) {
    assert.deepEqual(await complaints(file, source), [], `${file} importing ${source}`);
  }

  it('keeps shared/ free of the server and the client', async () => {
    await assertRefused('shared/probe.ts', '../server/errors.js', 'server/errors.ts');
    await assertRefused('shared/probe.ts', '../client/importer/journal.js', 'client/importer/journal.ts');
    await assertAllowed('shared/probe.ts', './schemas.js');
  });

  it('keeps the browser app and the importer off the server, and apart', async () => {
    await assertRefused('client/src/probe.ts', '../../server/services/calendar.js', 'server/services/calendar.ts');
    await assertRefused('client/importer/probe.ts', '../../server/errors.js', 'server/errors.ts');
    await assertRefused(
      'client/importer/probe.ts',
      '../src/hashing/content-hash.js',
      'client/src/hashing/content-hash.ts',
    );
    await assertAllowed('client/importer/probe.ts', '../../shared/schemas.js');
  });

  it('lets services import store ports, never an adapter, an assembly or http', async () => {
    await assertAllowed('server/services/probe.ts', '../store/ledger/port.js');
    await assertAllowed('server/services/probe.ts', '../store/archive-store.js');
    await assertRefused('server/services/probe.ts', '../store/ledger/embedded.js', 'server/store/ledger/embedded.ts');
    await assertRefused('server/services/probe.ts', '../store/ledger/mongo.js', 'server/store/ledger/mongo.ts');
    await assertRefused('server/services/probe.ts', '../store/embedded.js', 'server/store/embedded.ts');
    await assertRefused('server/services/probe.ts', '../http/app.js', 'server/http/app.ts');
  });

  it('checks re-exports and dynamic imports as it checks imports', async () => {
    const file = 'server/services/probe.ts';
    for (const code of [
      "export { LedgerEmbedded } from '../store/ledger/embedded.js';\n",
      "export const ledger = await import('../store/ledger/embedded.js');\n",
    ]) {
      const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
      assert.deepEqual(
        result!.messages.map((m) => m.ruleId),
        ['boundaries/dependencies'],
        code,
      );
    }
  });

  it('lets routes call services, never a store adapter', async () => {
    await assertAllowed('server/http/probe.ts', '../services/claims.js');
    await assertAllowed('server/http/probe.ts', '../store/uploads/port.js');
    await assertRefused('server/http/probe.ts', '../store/catalog/mongo.js', 'server/store/catalog/mongo.ts');
    await assertRefused('server/http/probe.ts', '../store/embedded/database.js', 'server/store/embedded/database.ts');
  });

  it("lets a capability import another capability's port only, and nothing of services", async () => {
    await assertAllowed('server/store/units/embedded.ts', '../catalog/port.js');
    await assertAllowed('server/store/units/embedded.ts', '../embedded/database.js');
    await assertRefused('server/store/units/embedded.ts', '../catalog/embedded.js', 'server/store/catalog/embedded.ts');
    // An adapter uses the kit of its own kind only.
    await assertRefused('server/store/units/embedded.ts', '../mongo/documents.js', 'server/store/mongo/documents.ts');
    await assertRefused('server/store/units/port.ts', '../catalog/mongo.js', 'server/store/catalog/mongo.ts');
    await assertRefused('server/store/units/probe.ts', '../../services/calendar.js', 'server/services/calendar.ts');
    // The exceptions (writes in the writer's transaction) are single pairs of files, not a
    // capability's freedom.
    await assertAllowed('server/store/content/embedded.ts', '../catalog/embedded.js');
    await assertRefused('server/store/content/embedded.ts', '../ledger/embedded.js', 'server/store/ledger/embedded.ts');
    await assertRefused('server/store/catalog/embedded.ts', '../ledger/embedded.js', 'server/store/ledger/embedded.ts');
    // An adapter in several files: its parts import each other, and nothing more than it may.
    await assertAllowed('server/store/ledger/embedded.ts', './embedded-totals.js');
    await assertAllowed('server/store/ledger/embedded-totals.ts', '../embedded/database.js');
    await assertRefused(
      'server/store/ledger/embedded-totals.ts',
      '../catalog/embedded.js',
      'server/store/catalog/embedded.ts',
    );
  });

  it('lets conformance suites import ports and test/support, not adapters or services', async () => {
    await assertAllowed('server/store/units/conformance.ts', '../../../test/support/stores.js');
    await assertAllowed('server/store/units/conformance.ts', '../accounts/port.js');
    await assertRefused('server/store/units/conformance.ts', './embedded.js', 'server/store/units/embedded.ts');
    await assertRefused('server/store/units/conformance.ts', '../../services/reports.js', 'server/services/reports.ts');
  });

  it('lets the thread plumbing import ports, and no service or route', async () => {
    await assertAllowed('server/threads/probe.ts', '../store/content/port.js');
    await assertRefused('server/threads/probe.ts', '../services/claims.js', 'server/services/claims.ts');
    await assertRefused('server/threads/probe.ts', '../http/app.js', 'server/http/app.ts');
    await assertRefused('server/threads/probe.ts', '../store/content/embedded.js', 'server/store/content/embedded.ts');
  });

  it('keeps products off the tests, and config.ts off the services', async () => {
    await assertRefused('server/services/probe.ts', '../../test/support/stores.js', 'test/support/stores.ts');
    await assertRefused('server/config.ts', './services/quotas.js', 'server/services/quotas.ts');
    await assertAllowed('server/config.ts', './limits.js');
  });

  it('lets tests meet store adapters only in test/support and the store tests', async () => {
    await assertAllowed('test/support/probe.ts', '../../server/store/ledger/mongo.js');
    await assertAllowed('test/store/probe.test.ts', '../../server/store/ledger/mongo.js');
    await assertAllowed('test/services/probe.test.ts', '../../server/services/quotas.js');
    await assertRefused('test/services/probe.test.ts', '../../server/store/embedded.js', 'server/store/embedded.ts');
    await assertRefused(
      'test/http/probe.test.ts',
      '../../server/store/ledger/mongo.js',
      'server/store/ledger/mongo.ts',
    );
    await assertRefused('test/store/probe.test.ts', '../../server/services/reports.js', 'server/services/reports.ts');
  });

  it('is what `npm run lint` checks on every TypeScript file', async () => {
    const lint = new ESLint({ cwd: ROOT });
    for (const file of ['server/services/claims.ts', 'client/src/main.tsx', 'test/support/stores.ts']) {
      const { rules } = await lint.calculateConfigForFile(path.join(ROOT, file));
      assert.equal(rules['boundaries/dependencies']?.[0], 2, file);
      assert.equal(rules['boundaries/no-unknown-files']?.[0], 2, file);
    }
  });

  it('refuses a file in a folder the boundaries do not know', async () => {
    const messages = await complaints('tools/probe.ts', '../shared/schemas.js');
    assert.deepEqual(
      messages.map((m) => m.split(':')[0]),
      ['boundaries/no-unknown-files'],
      messages.join('\n'),
    );
  });

  it('lets a new folder of the server or the tests import nothing until it has its arrows', async () => {
    await assertRefused('server/reports-cache/probe.ts', '../../shared/schemas.js', 'shared/schemas.ts');
    await assertRefused('test/lint/probe.test.ts', '../../shared/schemas.js', 'shared/schemas.ts');
  });
});
