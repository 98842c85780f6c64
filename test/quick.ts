import fs from 'node:fs';
import path from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

/**
 * The test files of `npm run test:quick` (test/quick.sh builds, then runs this): the store,
 * service, HTTP and unit tests, without the browser, fault and whole-process suites, which
 * `npm test` runs with everything else.
 */
const WHOLE_PROCESS = [
  'import',
  'cli',
  'operations',
  'shutdown',
  'start-up',
  'http/tus-process',
  'http/scale-out',
  'http/ocr-process',
  'kept-connections',
];
/** The quick build's own test: it holds that build to tsc -b's, which `npm test` makes first. */
const AFTER_TSC = ['quick-build'];

/**
 * The files that take longest, started first so none of them starts last with the other core
 * idle: the embedded store's (it kills writing processes) took 37 s of a 258 s run when it came
 * last. `node --test` sorts the files it is given by name; run() keeps this order.
 */
const LONGEST = [
  'store/embedded',
  'store/embedded-compaction',
  'client/content-hash',
  'http/tus',
  'http/token-scopes',
  'http/administration',
  'http/access',
];

const root = import.meta.dirname;
const name = (file: string) => file.replace(/\.test\.js$/, '');
const all = (fs.readdirSync(root, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.test.js'))
  .filter((f) => !f.startsWith('browser/') && ![...WHOLE_PROCESS, ...AFTER_TSC].includes(name(f)))
  .sort();
const first = LONGEST.map((n) => `${n}.test.js`).filter((f) => all.includes(f));
const files = [...first, ...all.filter((f) => !first.includes(f))].map((f) => path.join(root, f));

run({ files, concurrency: 2 })
  .on('test:fail', () => (process.exitCode = 1))
  .compose(spec)
  .pipe(process.stdout);
