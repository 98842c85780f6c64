import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import ts from 'typescript';

/**
 * The quick loop's build (test/quick.sh runs this file with Node's type stripping, before anything
 * is built): the project's TypeScript (tsconfig.json's files and the files they import) compiled to
 * dist/ one file at a time with TypeScript's own emitter, `ts.transpileModule`, without type
 * checking, which was four fifths of `tsc -b`'s time from scratch. The JavaScript and source maps
 * are the ones `tsc -b` writes: `isolatedModules` (tsconfig.json) makes the type check refuse what
 * a file alone cannot compile the same way, and test/quick-build.test.ts compares the two builds.
 * Type errors are `npm run typecheck`'s (and `npm run build`'s) to report.
 */

export interface QuickBuild {
  /** The TypeScript files compiled (their outputs were older than them, or missing). */
  compiled: string[];
  /** All the files the build covers. */
  files: string[];
}

/** A file to compile and where its JavaScript goes. */
type Job = [source: string, js: string];

/**
 * Compiles what changed since it was last compiled into `outDir` (tsconfig.json's own, unless
 * given), on as many threads as there are cores (two here: a thread compiles ~40 files a second).
 */
export async function quickBuild(root: string, outDir?: string): Promise<QuickBuild> {
  const configFile = path.join(root, 'tsconfig.json');
  const config = ts.getParsedCommandLineOfConfigFile(configFile, outDir ? { outDir } : {}, configHost);
  if (!config) throw new Error(`cannot read ${configFile}`);
  if (config.errors.length > 0) throw new Error(ts.formatDiagnostics(config.errors, formatHost));
  const { options } = config;
  const out = options.outDir!;
  const rootDir = options.rootDir!;
  // package.json has "type": "module", so every file is an ES module, as NodeNext compiles it;
  // a file compiled alone has no package.json to tell it so.
  const compilerOptions: ts.CompilerOptions = {
    ...options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    moduleDetection: ts.ModuleDetectionKind.Force,
  };
  // Other options or another compiler: every file is compiled again.
  const stampFile = path.join(out, '.quick-build');
  const stamp = JSON.stringify({ typescript: ts.version, compilerOptions });
  const fresh = readOr(stampFile) !== stamp;

  const files = withImports(config.fileNames);
  const jobs: Job[] = [];
  for (const file of files) {
    const js = path.join(out, path.relative(rootDir, file)).replace(/\.ts$/, '.js');
    if (fresh || mtime(js) < mtime(file)) jobs.push([file, js]);
  }
  // The first thread takes every other file, the others the rest in turn (files of all sizes each).
  const threads = Math.max(1, Math.min(os.availableParallelism(), Math.floor(jobs.length / 50)));
  const shares = Array.from({ length: threads }, (_, t) => jobs.filter((_, i) => i % threads === t));
  await Promise.all([
    ...shares.slice(1).map((share) => inWorker(share, compilerOptions)),
    Promise.resolve().then(() => compile(shares[0] ?? [], compilerOptions)),
  ]);
  if (jobs.length > 0) {
    fs.writeFileSync(stampFile, stamp);
    if (!outDir) forgetEmits(root);
  }
  return { compiled: jobs.map(([file]) => file), files };
}

function compile(jobs: readonly Job[], compilerOptions: ts.CompilerOptions): void {
  for (const [source, js] of jobs) {
    const result = ts.transpileModule(fs.readFileSync(source, 'utf8'), { compilerOptions, fileName: source });
    fs.mkdirSync(path.dirname(js), { recursive: true });
    if (result.sourceMapText !== undefined) fs.writeFileSync(`${js}.map`, result.sourceMapText);
    fs.writeFileSync(js, result.outputText);
  }
}

/** Compiles `jobs` on a thread of its own (this module, run as a worker). */
function inWorker(jobs: readonly Job[], compilerOptions: ts.CompilerOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { jobs, compilerOptions } });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`quick build thread exited with ${code}`)),
    );
  });
}

/**
 * The files tsc's program holds besides the roots: those they import (the browser app's modules
 * the client tests import, for one). Only relative imports: packages are not compiled.
 */
function withImports(roots: readonly string[]): string[] {
  const seen = new Set<string>();
  const pending = roots.map((f) => path.resolve(f));
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const { importedFiles, referencedFiles } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of [...importedFiles, ...referencedFiles]) {
      if (!fileName.startsWith('.')) continue;
      const source = path.resolve(path.dirname(file), fileName).replace(/\.js$/, '.ts');
      if (source.endsWith('.ts') && !source.endsWith('.d.ts') && fs.existsSync(source)) pending.push(source);
    }
  }
  return [...seen].sort();
}

/**
 * `tsc -b` (and tsconfig.server.json's build) skip a file whose source is as their build info
 * recorded, whatever its output is now: once this build has written into dist/, their next build
 * starts afresh, lest a file changed, compiled here, and changed back keep the output of the change.
 */
function forgetEmits(root: string): void {
  for (const project of ['tsconfig.json', 'tsconfig.server.json']) {
    if (!fs.existsSync(path.join(root, project))) continue;
    const parsed = ts.getParsedCommandLineOfConfigFile(path.join(root, project), {}, configHost);
    const buildInfo = parsed?.options.tsBuildInfoFile;
    if (buildInfo) fs.rmSync(buildInfo, { force: true });
  }
}

function readOr(file: string): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
}

/** Milliseconds since the epoch of a file's last change; 0 when it does not exist. */
function mtime(file: string): number {
  return fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0;
}

const configHost: ts.ParseConfigFileHost = {
  ...ts.sys,
  onUnRecoverableConfigFileDiagnostic: (d) => {
    throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
  },
};

const formatHost: ts.FormatDiagnosticsHost = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => process.cwd(),
  getNewLine: () => '\n',
};

if (!isMainThread) {
  const { jobs, compilerOptions } = workerData as { jobs: Job[]; compilerOptions: ts.CompilerOptions };
  compile(jobs, compilerOptions);
} else if (import.meta.main) {
  const { compiled, files } = await quickBuild(process.cwd());
  if (compiled.length > 0) console.log(`quick build: ${compiled.length} of ${files.length} files compiled`);
}
