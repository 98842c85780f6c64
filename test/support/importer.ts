import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { ImportReport } from '../../client/importer/import-report.js';

const IMPORTER = new URL('../../client/importer/main.js', import.meta.url).pathname;
/** `npm run archive -- import …`, the way scripts written before `npm run import` call it. */
const ARCHIVE_IMPORT = [new URL('../../server/cli/archive.js', import.meta.url).pathname, 'import'];

export interface ImportRun {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The JSON summary on the last line of standard output (with --json). */
  report: ImportReport | undefined;
}

export interface ImportProcess {
  child: ChildProcess;
  /** Everything the importer printed to standard error so far. */
  stderr(): string;
  done: Promise<ImportRun>;
}

/** The capabilities that let root read and enter whatever the permission bits say. */
const OVERRIDES = '-dac_override,-dac_read_search';

/**
 * How to run the importer so that a file of mode 000 is unreadable to it, as it is to a clerk's
 * account: as root, the same uid without the capabilities that override permission bits (it
 * still reads its own code and writes its journal anywhere root may, unlike another uid, which
 * cannot enter a checkout under a 0700 home). `undefined` where that cannot be arranged (root
 * without setpriv, or not allowed to drop capabilities), so those cases are not tested there.
 */
export const unprivilegedPrefix: string[] | undefined = (() => {
  if (process.getuid?.() !== 0) return [];
  const prefix = ['setpriv', '--bounding-set', OVERRIDES, '--'];
  const probe = spawnSync(prefix[0]!, [...prefix.slice(1), process.execPath, '-e', ''], { stdio: 'ignore' });
  return probe.status === 0 ? prefix : undefined;
})();

/**
 * `npm run import -- …` as a child process (asynchronous: the server under test may run
 * in this process), unable to read files its permission bits forbid (see `unprivilegedPrefix`).
 */
export function startImport(
  args: string[],
  options: { env?: Record<string, string>; viaArchiveCommand?: boolean } = {},
): ImportProcess {
  const [command, ...prefixArgs] = [...(unprivilegedPrefix ?? []), process.execPath];
  const child = spawn(command, [...prefixArgs, ...(options.viaArchiveCommand ? ARCHIVE_IMPORT : [IMPORTER]), ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<ImportRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status, signal) => {
      const last = stdout.trimEnd().split('\n').pop() ?? '';
      let report: ImportReport | undefined;
      if (last.startsWith('{')) report = JSON.parse(last) as ImportReport;
      resolve({ status, signal, stdout, stderr, report });
    });
  });
  return { child, stderr: () => stderr, done };
}

export function runImport(
  args: string[],
  options: { env?: Record<string, string>; viaArchiveCommand?: boolean } = {},
): Promise<ImportRun> {
  return startImport(args, options).done;
}
