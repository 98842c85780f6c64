// The import boundaries: which part of the house may import which, as docs/architecture.md draws
// its arrows. eslint-plugin-boundaries describes every file by its folder (an element) and, where a
// folder holds parts of different standing (a capability's port and adapters, server/'s top
// files), by the file itself (a category). The rule `boundaries/dependencies` then refuses every
// import that no arrow below allows, within a folder too; `boundaries/no-unknown-files` refuses a
// TypeScript file that is in no element, so a new folder gets its place and arrows here first.
import boundaries from 'eslint-plugin-boundaries';

/** Folders, by path from the repository's root. */
const ELEMENTS = [
  // What the capabilities of one adapter kind share (connection, SQL, document helpers).
  { type: 'store kit', pattern: 'server/store/@(embedded|mongo)', capture: ['kind'] },
  { type: 'capability', pattern: 'server/store/*', capture: ['capability'] },
  { type: 'store', pattern: 'server/store' },
  { type: 'http', pattern: 'server/http' },
  { type: 'services', pattern: 'server/services' },
  // Worker-thread plumbing (hashing, chunk writing, upload locks) that services and routes use.
  { type: 'threads', pattern: 'server/threads' },
  { type: 'cli', pattern: 'server/cli' },
  { type: 'server', pattern: 'server' },
  { type: 'shared', pattern: 'shared' },
  { type: 'browser app', pattern: 'client/src' },
  { type: 'importer', pattern: 'client/importer' },
  { type: 'client', pattern: 'client' },
  { type: 'test support', pattern: 'test/support' },
  { type: 'store tests', pattern: 'test/store' },
  { type: 'service tests', pattern: 'test/services' },
  { type: 'thread tests', pattern: 'test/threads' },
  { type: 'http tests', pattern: 'test/http' },
  { type: 'browser tests', pattern: 'test/browser' },
  { type: 'client tests', pattern: 'test/client' },
  { type: 'shared tests', pattern: 'test/shared' },
  { type: 'deployment tests', pattern: 'test/deployment' },
  // The whole-process suites (cli, operations, import, shutdown) and the other tests at the top.
  { type: 'process tests', pattern: 'test' },
  { type: 'faults', pattern: 'faults' },
  { type: 'bench', pattern: 'bench' },
].map((element) => ({ partialMatch: false, ...element }));

/** Files whose standing differs from their folder's neighbours' (the first that matches). */
const FILES = [
  { category: 'port', pattern: 'server/store/*/port.ts' },
  // The whole store as services see it: the ports together.
  { category: 'port', pattern: 'server/store/archive-store.ts' },
  { category: 'adapter', pattern: 'server/store/*/@(embedded|mongo).ts', capture: ['capability', 'kind'] },
  // Part of one adapter, in a file of its own (the ledger's totals: ledger/embedded-totals.ts).
  {
    category: 'adapter',
    pattern: 'server/store/*/@(embedded|mongo)-*.ts',
    capture: ['capability', 'kind', 'part'],
  },
  { category: 'conformance suite', pattern: 'server/store/*/conformance.ts' },
  // A capability's other modules (the content's files, packs and chunk sums).
  { category: 'capability module', pattern: 'server/store/*/*.ts' },
  // embedded.ts and mongo.ts assemble a whole store of their kind; open.ts opens the one configured.
  { category: 'assembly', pattern: 'server/store/@(embedded|mongo).ts' },
  { category: 'opening', pattern: 'server/store/open.ts' },
  { category: 'composition root', pattern: 'server/@(main|compose|shutdown).ts' },
  { category: 'config', pattern: 'server/config.ts' },
  { category: 'limits', pattern: 'server/limits.ts' },
  { category: 'errors', pattern: 'server/errors.ts' },
  { category: 'log', pattern: 'server/log.ts' },
  // The tests at the top of test/ (a new folder of tests needs its own element).
  { category: 'process test', pattern: 'test/*.ts' },
].map((file) => ({ partialMatch: false, ...file }));

const inFolder = (type) => ({ element: { type } });
const file = (category, type) => ({ element: { type }, file: { categories: category } });

/** The parts the arrows speak of, each as the files it is. */
const PARTS = {
  shared: [inFolder('shared')],
  'browser app': [inFolder('browser app')],
  'browser build': [inFolder('client')],
  importer: [inFolder('importer')],
  errors: [file('errors', 'server')],
  log: [file('log', 'server')],
  limits: [file('limits', 'server')],
  config: [file('config', 'server')],
  'composition root': [file('composition root', 'server'), inFolder('cli')],
  http: [inFolder('http')],
  services: [inFolder('services')],
  threads: [inFolder('threads')],
  'store port': [file('port', 'capability'), file('port', 'store')],
  'store adapter': [file('adapter', 'capability')],
  'capability module': [file('capability module', 'capability')],
  'conformance suite': [file('conformance suite', 'capability')],
  'store kit': [inFolder('store kit')],
  'store assembly': [file('assembly', 'store'), file('opening', 'store')],
  'store opening': [file('opening', 'store')],
  'test support': [inFolder('test support')],
  'store tests': [inFolder('store tests')],
  'service tests': [inFolder('service tests')],
  'thread tests': [inFolder('thread tests')],
  'http tests': [inFolder('http tests')],
  'browser tests': [inFolder('browser tests')],
  'client tests': [inFolder('client tests')],
  'shared tests': [inFolder('shared tests')],
  'deployment tests': [inFolder('deployment tests')],
  'process tests': [file('process test', 'process tests')],
  faults: [inFolder('faults')],
  bench: [inFolder('bench')],
};

/** The capability module or kit of the importing adapter's own capability or kind. */
const OWN_CAPABILITY_MODULE = {
  element: { type: 'capability', captured: { capability: '{{ from.element.captured.capability }}' } },
  file: { categories: 'capability module' },
};
/** The other files of the importing adapter, of its own capability and kind (ledger/embedded-totals.ts). */
const OWN_ADAPTER_PART = {
  element: { type: 'capability', captured: { capability: '{{ from.element.captured.capability }}' } },
  file: { categories: 'adapter', captured: { kind: '{{ from.file.captured.kind }}' } },
};
const OWN_KIT = { element: { type: 'store kit', captured: { kind: '{{ from.file.captured.kind }}' } } };
const KIT_OF_ITS_KIND = { element: { type: 'store kit', captured: { kind: '{{ from.element.captured.kind }}' } } };

const STORE = ['store port', 'store adapter', 'capability module', 'conformance suite', 'store kit', 'store assembly'];
const PRODUCT = [
  ...['shared', 'browser app', 'importer', 'errors', 'log', 'limits', 'config', 'composition root'],
  ...['http', 'services', 'threads', ...STORE.filter((part) => part !== 'conformance suite')],
];
/** What a server module may import wherever it sits: the shared schemas and the typed errors. */
const BASE = ['shared', 'errors'];

/**
 * Who may import whom: each part and what it may import (itself included where it may). A part's
 * files import nothing else.
 */
const ARROWS = {
  // shared/ imports nothing of server or client.
  shared: ['shared'],
  // The browser app and the importer talk to the server over HTTP only, and not to each other.
  'browser app': ['browser app', 'shared'],
  // client/vite.config.ts
  'browser build': [],
  importer: ['importer', 'shared'],
  errors: ['shared'],
  log: [],
  // The archive's limits and their defaults, which settings may change.
  limits: [],
  // config.ts reads the settings from the environment: the limits' defaults, no service; and the
  // stores open.ts can open (STORE), which it names without loading any (open.ts loads an
  // adapter only when asked to open it).
  config: [...BASE, 'limits', 'store opening'],
  // Routes call services and name ports' types, never a store adapter.
  http: [...BASE, 'http', 'log', 'limits', 'services', 'threads', 'store port'],
  // Services import store ports, never an adapter, and nothing of http.
  services: [...BASE, 'services', 'log', 'limits', 'threads', 'store port'],
  threads: [...BASE, 'threads', 'log', 'store port'],
  // Capabilities import another capability's port only; a port names other ports' types.
  'store port': [...BASE, 'store port'],
  'store adapter': [...BASE, 'log', 'store port', OWN_CAPABILITY_MODULE, OWN_ADAPTER_PART, OWN_KIT],
  'capability module': [...BASE, 'store port', OWN_CAPABILITY_MODULE],
  'store kit': [...BASE, 'log', 'store port', KIT_OF_ITS_KIND],
  // The conformance suites are tests: they import the ports they specify, and test/support.
  'conformance suite': [...BASE, 'store port', 'test support'],
  'store assembly': [...BASE, 'log', ...STORE.filter((part) => part !== 'conformance suite')],
  // main.ts and compose.ts (with the shutdown and the CLI) know every room; no test.
  'composition root': PRODUCT.filter((part) => !['browser app', 'browser build'].includes(part)),
  // Tests meet the products in test/support and in the conformance suites. Besides, a test
  // imports the layer it specifies and what that layer may import, and reaches a store through
  // test/support, never an adapter: only the store's own tests import adapters and assemblies.
  'test support': ['test support', ...PRODUCT],
  'store tests': [...BASE, 'store tests', 'test support', 'log', ...STORE],
  'service tests': [...BASE, 'service tests', 'test support', 'log', 'limits', 'services', 'threads', 'store port'],
  'http tests': [...BASE, 'http tests', 'test support', 'log', 'limits', 'http', 'services', 'threads', 'store port'],
  'thread tests': [...BASE, 'thread tests', 'test support', 'log', 'threads', 'store port'],
  // Browser tests drive the browser app against a server in process: the http tests' reach, and the app.
  'browser tests': [
    ...[...BASE, 'browser tests', 'test support', 'log', 'limits', 'http', 'services', 'threads', 'store port'],
    'browser app',
  ],
  'client tests': ['client tests', 'shared', 'browser app', 'importer'],
  'shared tests': ['shared tests', 'shared'],
  'deployment tests': ['deployment tests'],
  // The whole-process suites and the faults run the whole server: the composition root's reach,
  // with a store opened as the composition root opens one (open.ts) or through test/support.
  'process tests': [
    ...[...BASE, 'process tests', 'test support', 'log', 'limits', 'config', 'composition root'],
    ...['services', 'threads', 'importer', 'store port', 'store opening'],
  ],
  faults: [
    ...[...BASE, 'faults', 'test support', 'log', 'limits', 'config', 'composition root'],
    ...['services', 'store port', 'store opening'],
  ],
  // The benchmarks measure any part of the product (seeding stores through the store's seeding
  // modules: benchSeedingConfig in eslint.config.js); nothing imports them.
  bench: ['bench', 'test support', ...PRODUCT],
};

const selectors = (parts) => parts.flatMap((part) => (typeof part === 'string' ? PARTS[part] : [part]));

/**
 * Imports that break an arrow, allowed one by one with the reason: a file allowed to import one
 * other file.
 */
const EXCEPTIONS = [
  // The online backup copies the whole embedded store, its content files and packs with it, and
  // checks them with their chunk sums: it reads the content capability's file layout, as the
  // assembly does, from the embedded kit where the CLI finds it.
  ...['chunk-sums', 'content-files', 'packs'].map((module) => [
    'server/store/embedded/backup.ts',
    `server/store/content/${module}.ts`,
  ]),

  // Writes that must share the writer's transaction go through a function the owner's adapter
  // exports (docs/architecture.md, "Who owns which table"): the content's commit catalogues a file
  // (catalogEntries), the ledger's count appends its audit event (auditAppender).
  ['server/store/content/embedded.ts', 'server/store/catalog/embedded.ts'],
  ['server/store/content/mongo.ts', 'server/store/catalog/mongo.ts'],
  ['server/store/ledger/embedded.ts', 'server/store/audit/embedded.ts'],

  // The reports bench's comparison of 0% and 10% withdrawn is only worth its figures if each query
  // goes to both archives in turn: its test drives the timing with archives that answer at once.
  ['test/bench-reports.test.ts', 'bench/reports.ts'],
  // The OCR speed bench asks its workers page after page: its test checks that no listener of a
  // page before is left on a worker (Node warns past ten).
  ['test/bench-worker-reply.test.ts', 'bench/scans/worker-reply.ts'],
  // Seeded files have no bytes: the seeding must leave a starting server nothing to read, or a
  // benchmark measures a server failing them all in the background.
  ['test/bench-seed-fingerprints.test.ts', 'bench/seed.ts'],
  // Pages summed in partitions of the files need thousands of files over many units and days to
  // hold files in more than one partition: the reports bench's own data set, at a small size.
  ['test/store/embedded-report-partitions.test.ts', 'bench/seed.ts'],
];

const policies = [
  ...Object.entries(ARROWS)
    .filter(([, allowed]) => allowed.length > 0)
    .map(([from, allowed]) => ({ from: PARTS[from], allow: { to: selectors(allowed) } })),
  ...EXCEPTIONS.map(([from, to]) => ({ from: { file: { path: from } }, allow: { to: { file: { path: to } } } })),
];

export const boundaryConfig = {
  files: ['**/*.ts', '**/*.tsx'],
  plugins: { boundaries },
  settings: {
    // TypeScript's resolution, so that `./port.js` is the file port.ts.
    'import/resolver': { typescript: { project: `${import.meta.dirname}/tsconfig.json` } },
    // Patterns are paths from the repository's root, wherever ESLint runs from.
    'boundaries/root-path': import.meta.dirname,
    'boundaries/elements': ELEMENTS,
    'boundaries/files': FILES,
    'boundaries/files-single-match': true,
    'boundaries/legacy-templates': false,
  },
  rules: {
    'boundaries/dependencies': [
      'error',
      {
        default: 'disallow',
        checkInternals: true,
        message:
          'import boundary (docs/architecture.md, eslint.boundaries.js): {{ from.file.path }} may not import {{ to.file.path }}',
        policies,
      },
    ],
    'boundaries/no-unknown-files': 'error',
  },
};
