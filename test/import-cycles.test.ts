import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { tempDir } from './support/stores.js';

/** The repository, from dist/test/. */
const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * The lint's rule against import circles (eslint.cycles.js), asked about small projects of its
 * own, each a folder of one project with its own tsconfig.json. That the tree itself has no circle
 * is what `npm run lint` checks.
 */
describe('the lint refuses circles of imports (eslint.cycles.js)', () => {
  /** Each case is a folder of one small project, linted once: its files (name → source). */
  const CASES: Record<string, Record<string, string>> = {
    'type-only': {
      'filters.ts': "import type { View } from './view.js';\nexport type Values = { view: View };\n",
      'view.ts': "import type { Values } from './filters.js';\nexport type View = { values: Values };\n",
    },
    longer: {
      'accounts.ts': "import { ROLES } from './schemas.js';\nexport const roles = ROLES;\n",
      'schemas.ts': "export { note } from './notes.js';\nexport const ROLES = ['clerk'];\n",
      'notes.ts':
        "export type Scope = import('./accounts.js').Scope;\nexport const note = () => import('./accounts.js');\n",
    },
    'one-way': {
      'page.ts': "import { a } from './a.js';\nimport { b } from './b.js';\nexport const page = [a, b];\n",
      'a.ts': "import type { Shared } from './shared.js';\nexport const a: Shared = 1;\n",
      'b.ts': "import type { Shared } from './shared.js';\nexport const b: Shared = 2;\n",
      'shared.ts': 'export type Shared = number;\n',
    },
    self: { 'self.ts': "import type { T } from './self.js';\nexport type T = string;\nexport const t: T = '';\n" },
  };
  const dir = tempDir('archive-cycles-');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  /** What the lint says, by case and file: "line: rule: message". */
  let said: Record<string, Record<string, string[]>>;

  before(async () => {
    const compilerOptions = {
      ...{ target: 'ES2022', lib: ['ES2022'], types: [] },
      ...{ module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
    };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['.'] }));
    for (const [name, files] of Object.entries(CASES)) {
      fs.mkdirSync(path.join(dir, name));
      for (const [file, source] of Object.entries(files)) fs.writeFileSync(path.join(dir, name, file), source);
    }
    const { cycleConfig } = await import(pathToFileURL(path.join(ROOT, 'eslint.cycles.js')).href);
    const eslint = new ESLint({
      cwd: dir,
      overrideConfigFile: true,
      overrideConfig: [
        {
          files: ['**/*.ts'],
          languageOptions: {
            parser: tseslint.parser,
            parserOptions: { project: './tsconfig.json', tsconfigRootDir: dir },
          },
        },
        cycleConfig,
      ],
    });
    said = {};
    for (const result of await eslint.lintFiles(['.'])) {
      const [name, file] = path.relative(dir, result.filePath).split(path.sep) as [string, string];
      // Paths in messages are from the project's root: shown here from the case's folder.
      (said[name] ??= {})[file] = result.messages.map(
        (m) => `${m.line}: ${m.ruleId}: ${m.message.replaceAll(`${name}/`, '')}`,
      );
    }
  });

  const circle = (way: string) => `imports/no-cycle: import circle (docs/decisions/no-import-circles.md): ${way}`;

  it('refuses a circle made of type-only imports, in each of its files, with the way round', () => {
    assert.deepEqual(said['type-only'], {
      'filters.ts': [`1: ${circle('filters.ts → view.ts → filters.ts')}`],
      'view.ts': [`1: ${circle('view.ts → filters.ts → view.ts')}`],
    });
  });

  it('follows re-exports, import() and import types round a longer circle, and names the way', () => {
    assert.deepEqual(said['longer'], {
      'accounts.ts': [`1: ${circle('accounts.ts → schemas.ts → notes.ts → accounts.ts')}`],
      'schemas.ts': [`1: ${circle('schemas.ts → notes.ts → accounts.ts → schemas.ts')}`],
      // Two imports of the same module: each closes the circle.
      'notes.ts': [
        `1: ${circle('notes.ts → accounts.ts → schemas.ts → notes.ts')}`,
        `2: ${circle('notes.ts → accounts.ts → schemas.ts → notes.ts')}`,
      ],
    });
  });

  it('lets imports run one way, however they meet, and says nothing of modules outside a circle', () => {
    assert.deepEqual(said['one-way'], { 'page.ts': [], 'a.ts': [], 'b.ts': [], 'shared.ts': [] });
  });

  it('refuses a module that imports itself', () => {
    assert.deepEqual(said['self'], { 'self.ts': [`1: ${circle('self.ts → self.ts')}`] });
  });
});
