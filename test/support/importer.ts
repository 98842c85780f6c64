import { spawn, type ChildProcess } from 'node:child_process';
import type { ImportReport } from '../../server/cli/import/import-report.js';

const CLI = new URL('../../server/cli/archive.js', import.meta.url).pathname;

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

/**
 * `npm run archive -- import …` as a child process (asynchronous: the server under test may run
 * in this process). `asUser` runs it under another uid (as root, files with mode 000 are readable).
 */
export function startImport(args: string[], options: { env?: Record<string, string>; asUser?: number } = {}): ImportProcess {
  const child = spawn(process.execPath, [CLI, 'import', ...args], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.asUser !== undefined ? { uid: options.asUser, gid: options.asUser } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d));
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
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

export function runImport(args: string[], options: { env?: Record<string, string>; asUser?: number } = {}): Promise<ImportRun> {
  return startImport(args, options).done;
}
