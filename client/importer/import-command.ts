import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ArchiveAnswerError, ArchiveConnection } from './archive-connection.js';
import { FingerprintPool } from './fingerprints.js';
import { dryRunLines, summaryLines, type ImportProblem } from './import-report.js';
import { Importer } from './importer.js';
import { ResultsFile } from './results-file.js';
import { ImportJournal } from './journal.js';
import { ProgressBars } from './progress.js';
import { readManifest, SourceError, walkTree, type ImportSource } from './sources.js';

export const IMPORT_USAGE = `Usage: npm run import -- <dir> --server <url> --token <token> [options]
       npm run import -- --manifest <file.csv> [<dir>] --server <url> --token <token> [options]

Imports a folder tree (or the files a path table names) into the archive over its public API,
deduplicating as it goes: each file is hashed here (MD5 + SHA-256); content the archive already
holds is recorded without sending it, the rest is sent resumably (tus).

  --server <url>        the archive, e.g. https://archive.example.gov (or ARCHIVE_SERVER)
  --token <token>       an API token (or ARCHIVE_TOKEN, which keeps it out of the process list);
                        made with: npm run archive -- token create <username>
  --manifest <file.csv> import the files a path table names instead of a whole tree: a header
                        row with a "path" column, and optionally "record_id" and "name" (the name
                        the archive records); relative paths are taken from <dir>, or else from
                        the folder of the table; UTF-8 or GB18030
  --count-again         also count files this account uploaded into its unit before (by an
                        earlier import with another journal, or in the browser); by default
                        they are skipped, counted nowhere, and listed as skipped
  --dry-run             only hash and ask: list identical files within the tree and files the
                        archive already holds; nothing is uploaded or recorded
  --json                end standard output with one line of JSON: seen, uploaded, instant,
                        duplicatesInTree, skipped, bytesSent, bytesSaved, errors (path,
                        reason), …
  --journal <file>      where to keep the journal that lets a re-run skip finished files and
                        resume unfinished uploads (default: one per server, account and source
                        under ~/.local/state/archive-dedup/imports)
  --results <file.csv>  write one row per file: path, record_id, outcome (uploaded, instant,
                        duplicateInTree, alreadyImported, skipped, error), file_id (the
                        archive's), md5, size, reason: the map from the old paths and records
                        to the archive
  --threads <n>         files hashed at the same time (default: 2)
  --uploads <n>         files checked or sent at the same time (default: 3)

Exit code: 0 when every file was imported, 1 when some could not be (listed at the end),
2 for wrong usage or a server or token that cannot be used, 130 when interrupted (Ctrl-C;
run the same command again to continue).`;

class UsageError extends Error {}

function count(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw new UsageError(`${flag} is a whole number from 1 to 64.`);
  return n;
}

/** One journal per server, account and source, so imports of other trees or for others do not mix. */
function defaultJournal(server: string, accountId: string, source: string): string {
  const base = process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state');
  const id = createHash('sha256').update(`${server}\n${accountId}\n${source}`).digest('hex').slice(0, 16);
  return path.join(
    base,
    'archive-dedup',
    'imports',
    `${path
      .basename(source)
      .replace(/[^\w.-]+/g, '_')
      .slice(0, 40)}-${id}.jsonl`,
  );
}

export async function runImportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      manifest: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'count-again': { type: 'boolean' },
      json: { type: 'boolean' },
      journal: { type: 'string' },
      results: { type: 'string' },
      threads: { type: 'string' },
      uploads: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${IMPORT_USAGE}\n`);
    return 0;
  }
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const fail = (message: string) => {
    process.stderr.write(`archive import: ${message}\n`);
    return 2;
  };
  let settings;
  try {
    settings = {
      dir: positionals[0],
      server: values.server ?? process.env.ARCHIVE_SERVER,
      token: values.token ?? process.env.ARCHIVE_TOKEN,
      threads: count(values.threads, 2, '--threads'),
      uploads: count(values.uploads, 3, '--uploads'),
    };
    if (positionals.length > 1)
      throw new UsageError(`one folder at a time (got ${positionals.length}); quote names with spaces.`);
    if (!settings.dir && !values.manifest)
      throw new UsageError(`name the folder to import, or a path table with --manifest.\n\n${IMPORT_USAGE}`);
    if (!settings.server) throw new UsageError('--server <url> is required (or set ARCHIVE_SERVER).');
    if (!/^https?:\/\/[^/]/.test(settings.server))
      throw new UsageError(`--server must be an http:// or https:// address, not "${settings.server}".`);
    if (values.results && values['dry-run'])
      throw new UsageError('--results lists what an import did; a dry run does nothing to list.');
    if (!settings.token)
      throw new UsageError(
        '--token <token> is required (or set ARCHIVE_TOKEN); make one with: npm run archive -- token create <username>',
      );
  } catch (err) {
    if (err instanceof UsageError) return fail(err.message);
    throw err;
  }

  const connection = new ArchiveConnection(settings.server, settings.token);
  let accountId: string;
  try {
    const session = await connection.session();
    accountId = session.account.id;
    process.stderr.write(
      `importing as ${session.account.username} (unit ${session.account.unit.id}) into ${settings.server}\n`,
    );
  } catch (err) {
    if (err instanceof ArchiveAnswerError) return fail(err.message);
    throw err;
  }

  let source: ImportSource;
  let sourceName: string;
  try {
    if (values.manifest) {
      sourceName = path.resolve(values.manifest);
      source = await readManifest(
        values.manifest,
        settings.dir ? path.resolve(settings.dir) : path.dirname(sourceName),
      );
    } else {
      sourceName = path.resolve(settings.dir!);
      source = await walkTree(sourceName);
    }
  } catch (err) {
    if (err instanceof SourceError) return fail(err.message);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES')
      return fail(`cannot read ${values.manifest ?? settings.dir}: ${(err as Error).message}`);
    throw err;
  }

  const dryRun = values['dry-run'] === true;
  let journal: ImportJournal | undefined;
  if (!dryRun) {
    const file = values.journal ? path.resolve(values.journal) : defaultJournal(settings.server, accountId, sourceName);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    journal = ImportJournal.open(file);
    process.stderr.write(`journal: ${file}\n`);
  }

  const interrupt = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    // A second Ctrl-C does not wait for uploads to stop cleanly.
    if (++interrupts > 1) process.exit(130);
    process.stderr.write(
      '\nstopping: no new files; uploads keep what was sent and resume on the next run (Ctrl-C again to quit at once)\n',
    );
    interrupt.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const pool = new FingerprintPool(settings.threads);
  const bars = process.stderr.isTTY ? new ProgressBars(process.stderr, () => importer.progress) : undefined;
  const onProblem = (p: ImportProblem) => {
    const line = `error: ${p.path}${p.recordId ? ` (record ${p.recordId})` : ''}: ${p.reason}`;
    if (bars) bars.note(line);
    else process.stderr.write(`${line}\n`);
  };
  const results = values.results ? new ResultsFile(path.resolve(values.results)) : undefined;
  const importer = new Importer({
    connection,
    pool,
    journal,
    uploads: settings.uploads,
    dryRun,
    countAgain: values['count-again'] === true,
    signal: interrupt.signal,
    onProblem,
    onFile: results && ((r) => results.write(r)),
  });
  bars?.start();
  let report;
  try {
    report = await importer.run(source);
  } finally {
    bars?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await pool.close();
    journal?.close();
    results?.close();
  }

  if (dryRun) for (const line of dryRunLines(importer.findings)) out(line);
  for (const line of summaryLines(report)) out(line);
  if (values.json) out(JSON.stringify(report));
  if (importer.stopped) {
    process.stderr.write(`archive import: ${importer.stopped.message}\n`);
    return 1;
  }
  if (report.interrupted) return 130;
  return report.errors.length > 0 ? 1 : 0;
}
