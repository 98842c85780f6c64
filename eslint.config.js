// ESLint with type-aware rules (typescript-eslint) over every TypeScript file of the project;
// Prettier formats (eslint-config-prettier turns off the rules that would argue with it); the
// import boundaries of docs/architecture.md are checked by the rules in eslint.boundaries.js, and
// circles of imports are refused by the rule in eslint.cycles.js.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { boundaryConfig } from './eslint.boundaries.js';
import { oldBrowserConfig } from './eslint.browsers.js';
import { cycleConfig } from './eslint.cycles.js';

/** node:test's describe, it and hooks return promises the runner itself awaits. */
const NODE_TEST = {
  from: 'package',
  package: 'node:test',
  name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
};

/** SQL that writes: a table's rows or the schema. */
const WRITING_SQL =
  '/\\b(INSERT\\s+(OR\\s+\\w+\\s+)?INTO|UPDATE\\s+\\w+\\s+SET|DELETE\\s+FROM|REPLACE\\s+INTO|DROP\\s+(TABLE|INDEX|TRIGGER|VIEW)|CREATE\\s+(UNIQUE\\s+)?(TABLE|INDEX|TRIGGER|VIEW)|ALTER\\s+TABLE)\\b/';
const SEED_THROUGH_THE_STORE =
  'the benchmarks seed a store through the seeding modules of the capabilities that own its tables (server/store/*/seeding.ts; docs/architecture.md), never by writing them';

/**
 * The benchmarks write a store's tables only through the store's seeding modules, which the
 * conformance suites check against counting (issue 40): no SQL that writes, no MongoDB driver.
 * (They may read a table to measure it: a reference scan, a table's size, a query plan.)
 */
export const benchSeedingConfig = {
  files: ['bench/**/*.ts'],
  rules: {
    'no-restricted-imports': ['error', { paths: [{ name: 'mongodb', message: SEED_THROUGH_THE_STORE }] }],
    'no-restricted-syntax': [
      'error',
      { selector: `Literal[value=${WRITING_SQL}]`, message: SEED_THROUGH_THE_STORE },
      { selector: `TemplateElement[value.raw=${WRITING_SQL}]`, message: SEED_THROUGH_THE_STORE },
    ],
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-artifacts/', '.bench/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // The server's project (server, shared, tests, benchmarks, importer) and the browser's (DOM, JSX).
      parserOptions: { project: ['./tsconfig.json', './client/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [NODE_TEST] }],
      // The embedded store implements promise-returning ports with synchronous SQLite calls: its
      // methods are `async` without awaiting, so a thrown error becomes a rejection as on MongoDB.
      '@typescript-eslint/require-await': 'off',
      // Names starting with "_" are unused on purpose (a parameter a signature requires).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['test/**', 'faults/**', 'bench/**', 'server/store/*/conformance.ts'],
    rules: {
      // Tests read response bodies and documents as `any` (fetch's json(), the driver's raw
      // documents) and assert on them: typing every body first would add nothing the asserts miss.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // mongosh scripts: the shell's globals.
    files: ['deploy/mongo/*.js'],
    languageOptions: {
      globals: {
        db: 'readonly',
        rs: 'readonly',
        Mongo: 'readonly',
        quit: 'readonly',
        print: 'readonly',
        printjson: 'readonly',
        sleep: 'readonly',
        process: 'readonly',
        // mongosh loads Node's built-in modules with require() (fs, for Docker secrets).
        require: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  benchSeedingConfig,
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  boundaryConfig,
  cycleConfig,
  oldBrowserConfig,
  prettier,
);
