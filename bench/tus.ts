import { makeFile } from './files.js';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Upload, type HttpRequest } from 'tus-js-client';
import { benchToken, startBenchServer, startNodeServer, type BenchServer } from './server.js';

const MiB = 1024 * 1024;
/** The client's PATCH size, the same for both contenders. */
const CHUNK_SIZE = 8 * MiB;

/** The reference tus server (this file runs as dist/bench/tus.js). */
const referenceScript = new URL('./tus-reference.js', import.meta.url).pathname;

export interface TusContender {
  /** Best of the runs, start to onSuccess. */
  seconds: number;
  runs: number[];
  /** Highest server peak RSS over the runs. */
  serverPeakRssMb: number;
  /** Server CPU time (user + system, all threads) during the best run. */
  serverCpuSeconds: number;
}

export interface TusResumeResult {
  /** The completing PATCH (the last 8 MiB, then verify and commit) of an uninterrupted upload. */
  normalLastPatchSeconds: number;
  /** The same after a server restart at half-way: the running hashes were lost, so it re-reads the staged bytes. */
  restartedLastPatchSeconds: number;
  /** The second half of each upload, wall time: uninterrupted, and resumed on the new server. */
  normalSecondHalfSeconds: number;
  restartedSecondHalfSeconds: number;
}

export interface TusResult {
  sizeMiB: number;
  archive: TusContender;
  fileStore: TusContender;
  /** Our throughput over the file store's. */
  ratio: number;
  resume: TusResumeResult;
}

/** The metadata a browser sends: name, type and both hashes, computed before the upload (this also reads the file into the page cache). */
async function describe(file: string): Promise<Record<string, string>> {
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  for await (const data of fs.createReadStream(file, { highWaterMark: MiB })) {
    md5.update(data as Buffer);
    sha256.update(data as Buffer);
  }
  return {
    filename: path.basename(file),
    filetype: 'application/octet-stream',
    md5: md5.digest('hex'),
    sha256: sha256.digest('hex'),
  };
}

const now = () => Number(process.hrtime.bigint()) / 1e9;

interface UploadRun {
  url: string;
  /** Start to onSuccess (or to the abort, with `stopAt`). */
  seconds: number;
  /** The last PATCH request: sent to answered. */
  lastPatchSeconds: number;
  /** When the upload's accepted offset first reached `half` (absolute time, `now()`). */
  halfAt: number | undefined;
  finishedAt: number;
  /** The archive's outcome headers on the last response. */
  status: string | undefined;
  fileId: string | undefined;
}

interface UploadOptions {
  endpoint?: string;
  uploadUrl?: string;
  headers?: Record<string, string>;
  metadata: Record<string, string>;
  /** Notes when the accepted offset reaches this. */
  half?: number;
  /** Aborts (without terminating) once the server has accepted at least this many bytes. */
  stopAt?: number;
}

/** One upload with tus-js-client as a browser would do it: 8 MiB PATCHes from the file, no retries. */
function tusUpload(file: string, o: UploadOptions): Promise<UploadRun> {
  return new Promise<UploadRun>((resolve, reject) => {
    const sent = new Map<HttpRequest, number>();
    let lastPatchSeconds = 0;
    let halfAt: number | undefined;
    let status: string | undefined;
    let fileId: string | undefined;
    let started = 0;
    const done = (): UploadRun => {
      const finishedAt = now();
      return { url: upload.url!, seconds: finishedAt - started, lastPatchSeconds, halfAt, finishedAt, status, fileId };
    };
    const source = fs.createReadStream(file);
    const upload = new Upload(source, {
      endpoint: o.endpoint ?? null,
      uploadUrl: o.uploadUrl ?? null,
      chunkSize: CHUNK_SIZE,
      retryDelays: null,
      metadata: o.metadata,
      headers: o.headers ?? {},
      onBeforeRequest: (req) => {
        sent.set(req, now());
      },
      onAfterResponse: (req, res) => {
        if (req.getMethod() === 'PATCH') lastPatchSeconds = now() - sent.get(req)!;
        sent.delete(req);
        status = res.getHeader('Archive-Status') ?? status;
        fileId = res.getHeader('Archive-File-Id') ?? fileId;
      },
      onChunkComplete: (_chunk, accepted) => {
        if (o.half !== undefined && halfAt === undefined && accepted >= o.half) halfAt = now();
        if (o.stopAt !== undefined && accepted >= o.stopAt) {
          const run = done();
          // An aborted upload keeps its source open (to resume it): close it here.
          upload.abort(false).then(() => {
            source.destroy();
            resolve(run);
          }, reject);
        }
      },
      onSuccess: () => resolve(done()),
      onError: reject,
    });
    started = now();
    upload.start();
  });
}

/** An upload into the archive; refuses any outcome but a newly stored file. */
async function archiveUpload(file: string, o: UploadOptions): Promise<UploadRun> {
  const run = await tusUpload(file, o);
  if (run.status !== 'stored' || !run.fileId)
    throw new Error(
      `tus upload finished with Archive-Status ${run.status ?? '(none)'}, Archive-File-Id ${run.fileId ?? '(none)'}`,
    );
  return run;
}

interface Measured {
  seconds: number;
  serverPeakRssMb: number;
  serverCpuSeconds: number;
}

/** Times one upload into `server`; the server's peak RSS and CPU time with it. */
async function measure(server: BenchServer, upload: () => Promise<UploadRun>): Promise<Measured> {
  const cpu = server.cpuSeconds();
  const run = await upload();
  return { seconds: run.seconds, serverPeakRssMb: server.peakRssMb(), serverCpuSeconds: server.cpuSeconds() - cpu };
}

function best(runs: Measured[]): TusContender {
  const fastest = runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  return {
    seconds: fastest.seconds,
    runs: runs.map((r) => r.seconds),
    serverPeakRssMb: Math.max(...runs.map((r) => r.serverPeakRssMb)),
    serverCpuSeconds: fastest.serverCpuSeconds,
  };
}

/**
 * tus uploads of one `sizeMiB` file with tus-js-client (8 MiB PATCHes over loopback) into
 * the archive (POST /api/tus, embedded store) and, as the reference, into a plain @tus/server
 * over @tus/file-store, which only writes the bytes to a file. Each contender runs twice on a
 * fresh server and data directory (so every archive upload is new content); the best time
 * counts. Then the cost of a lost running hash: an upload whose server restarts half-way
 * re-reads the staged bytes in its completing PATCH.
 */
export async function benchTus(sizeMiB: number): Promise<TusResult> {
  const size = sizeMiB * MiB;
  const half = Math.max(CHUNK_SIZE, Math.floor(size / 2 / CHUNK_SIZE) * CHUNK_SIZE);
  if (size <= half) throw new Error(`the tus bench needs more than ${(2 * CHUNK_SIZE) / MiB} MiB`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-tus-'));
  const file = path.join(work, 'input.bin');
  const servers = new Set<BenchServer>();
  const start = async (s: Promise<BenchServer>) => {
    const server = await s;
    servers.add(server);
    return server;
  };
  const stop = async (server: BenchServer) => {
    await server.stop();
    servers.delete(server);
  };
  try {
    await makeFile(file, size);
    const metadata = await describe(file);

    const archiveRun = async (run: number): Promise<Measured> => {
      const dataDir = path.join(work, `archive-${run}`);
      const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
      const headers = { Authorization: `Bearer ${benchToken(env)}` };
      const server = await start(startBenchServer(env));
      try {
        return await measure(server, () =>
          archiveUpload(file, { endpoint: `${server.url}/api/tus`, headers, metadata }),
        );
      } finally {
        await stop(server);
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    };
    const fileStoreRun = async (run: number): Promise<Measured> => {
      const directory = path.join(work, `file-store-${run}`);
      fs.mkdirSync(directory);
      const server = await start(startNodeServer(referenceScript, [directory], process.env));
      try {
        return await measure(server, async () => {
          const upload = await tusUpload(file, { endpoint: `${server.url}/files`, metadata });
          if (fs.statSync(path.join(directory, upload.url.split('/').pop()!)).size !== size)
            throw new Error('the file store holds the wrong number of bytes');
          return upload;
        });
      } finally {
        await stop(server);
        fs.rmSync(directory, { recursive: true, force: true });
      }
    };

    // Alternating, so a drift in the machine's speed hits both.
    const archiveRuns: Measured[] = [];
    const fileStoreRuns: Measured[] = [];
    for (const run of [1, 2]) {
      archiveRuns.push(await archiveRun(run));
      fileStoreRuns.push(await fileStoreRun(run));
    }
    const archive = best(archiveRuns);
    const fileStore = best(fileStoreRuns);

    // The lost running hash: in one data directory, an uninterrupted upload of the same size,
    // then a second file (new content) whose server is stopped half-way and started again.
    const dataDir = path.join(work, 'archive-restart');
    const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
    const headers = { Authorization: `Bearer ${benchToken(env)}` };
    const other = path.join(work, 'other.bin');
    await makeFile(other, size);
    const otherMetadata = await describe(other);

    let server = await start(startBenchServer(env));
    const normal = await archiveUpload(file, { endpoint: `${server.url}/api/tus`, headers, metadata, half });
    const firstHalf = await tusUpload(other, {
      endpoint: `${server.url}/api/tus`,
      headers,
      metadata: otherMetadata,
      stopAt: half,
    });
    await stop(server);
    server = await start(startBenchServer(env));
    const id = firstHalf.url.split('/').pop()!;
    const resumed = await archiveUpload(other, {
      uploadUrl: `${server.url}/api/tus/${id}`,
      headers,
      metadata: otherMetadata,
    });
    await stop(server);

    return {
      sizeMiB,
      archive,
      fileStore,
      ratio: fileStore.seconds / archive.seconds,
      resume: {
        normalLastPatchSeconds: normal.lastPatchSeconds,
        restartedLastPatchSeconds: resumed.lastPatchSeconds,
        normalSecondHalfSeconds: normal.finishedAt - normal.halfAt!,
        restartedSecondHalfSeconds: resumed.seconds,
      },
    };
  } finally {
    await Promise.all([...servers].map((server) => server.stop()));
    fs.rmSync(work, { recursive: true, force: true });
  }
}
