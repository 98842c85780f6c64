// ESLint with type-aware rules (typescript-eslint) over every TypeScript file of the project;
// Prettier formats (eslint-config-prettier turns off the rules that would argue with it); the
// import boundaries of docs/architecture.md are checked by the rules in eslint.boundaries.js, and
// circles of imports are refused by the rule in eslint.cycles.js.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { boundaryConfig } from './eslint.boundaries.js';
import { cycleConfig } from './eslint.cycles.js';

/** node:test's describe, it and hooks return promises the runner itself awaits. */
const NODE_TEST = {
  from: 'package',
  package: 'node:test',
  name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
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
  { files: ['**/*.js'], ...tseslint.configs.disableTypeChecked },
  boundaryConfig,
  cycleConfig,
  prettier,
);
