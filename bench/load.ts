import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHistogram } from 'node:perf_hooks';
import { Pool } from 'undici';
import { benchToken, handlingTimes, startBenchServer, type BenchAccount, type BenchServer } from './server.js';
import { seedCatalog } from './seed.js';
import { heapCensus, heapGrowth, type HeapCensus } from './heap.js';

/** One kind of request, as the load generator saw it. */
export interface OpResult {
  name: string;
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Answers other than the expected status and outcome (e.g. a 5xx, or a check of archived content answered `upload`). */
  wrong: number;
  /** Requests that failed on the connection (reset, refused) or got no answer within TIMEOUT_MS. */
  socketErrors: number;
  timeouts: number;
  /** The first unexpected answer or failure, for the report. */
  firstError?: string;
}

export interface LoadResult {
  clients: number;
  seconds: number;
  /** Each client's pause after an answer (0: none, the server saturated). */
  thinkMs: number;
  catalogued: number;
  accounts: number;
  units: number;
  files: number;
  /** The client groups: how many clients run each loop. */
  groups: Array<{ name: string; clients: number }>;
  /** Reference: GET /api/health from as many clients, just before the mix, for `referenceSeconds`. */
  health: OpResult;
  referenceSeconds: number;
  ops: OpResult[];
  perSecond: number;
  errors: number;
  /** The server's resident memory (MB) and the answers received, in each second of the mix. */
  rssMb: number[];
  answersPerSecond: number[];
  warmupSeconds: number;
  /**
   * The second from which the RSS is judged: after warm-up, or in a soak run 30 s after the half-way
   * heap snapshot, as writing a snapshot leaves the allocator holding ~100 MB more.
   */
  rssJudgedFrom: number;
  /**
   * Soak runs: the heap snapshots taken during the mix, each with the second it was asked for and
   * what it left in the server's RSS (the RSS 30 s after it was written less the RSS just before;
   * a server that takes none, as in service, does not hold it).
   */
  snapshots: Array<{ second: number; costMb: number }>;
  /**
   * Soak runs (BENCH_HEAP=1): the live heap (MB) after warm-up, half-way and at the end, and what
   * grew most over the second half (a leak keeps growing there; a cache that fills does not).
   */
  heap?: {
    afterWarmupMb: number;
    halfwayMb: number;
    endMb: number;
    grew: Array<{ name: string; count: number; kb: number }>;
  };
  /** The server's own time per endpoint (its log's responseTime, whole ms). */
  serverMs: Record<string, { p50: number; p99: number }>;
  /**
   * Request log lines the server had written when the mix ended (each answer of the mix logs
   * one): the rest were still queued in its memory, as pino writes 16 KiB per event-loop turn.
   */
  loggedAtEnd: number;
  serverCpuSeconds: number;
  generatorCpuSeconds: number;
  /** The server's error log lines (level error or fatal) during the mix, first few. */
  serverErrors: string[];
}

/** How long a request may wait for its answer's headers or the next bytes of its body. */
const TIMEOUT_MS = 10_000;

/** Latencies (in microseconds: perf_hooks histograms take integers) and failures of one kind of request. */
class Op {
  readonly latency = createHistogram();
  wrong = 0;
  socketErrors = 0;
  timeouts = 0;
  firstError?: string;
  constructor(readonly name: string) {}

  failed(kind: 'wrong' | 'socketErrors' | 'timeouts', detail: string): void {
    this[kind]++;
    this.firstError ??= detail;
  }

  result(seconds: number): OpResult {
    const h = this.latency;
    const ms = (us: number) => (h.count ? us / 1000 : NaN);
    const { name, wrong, socketErrors, timeouts, firstError } = this;
    return {
      name,
      requests: h.count,
      perSecond: h.count / seconds,
      p50Ms: ms(h.percentile(50)),
      p99Ms: ms(h.percentile(99)),
      maxMs: ms(h.max),
      wrong,
      socketErrors,
      timeouts,
      firstError,
    };
  }
}

/** An account the load runs as, with the files its unit uploaded (which it may download). */
interface LoadAccount {
  token: string;
  unitFiles: SeedFile[];
}

interface SeedFile {
  fileId: string;
  data: Buffer;
  /** The JSON body of a check for it. */
  check: string;
}

interface Answer {
  status?: string;
  claimId?: string;
  ranges?: Array<{ start: number; end: number }>;
}

const parse = (text: string): Answer => {
  try {
    return JSON.parse(text) as Answer;
  } catch {
    return {};
  }
};
const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;

/** Four units, two clerks each: two towns of one county, a town of another county, a county of another city. */
const UNITS: Array<Omit<BenchAccount, 'username'>> = [
  { unit: 'jc-dx-cgz', city: '江城市', county: '东县', town: '城关镇' },
  { unit: 'jc-dx-xcz', city: '江城市', county: '东县', town: '新城镇' },
  { unit: 'jc-xx-cgz', city: '江城市', county: '西县', town: '城关镇' },
  { unit: 'hy-nx', city: '河阳市', county: '南县' },
];
const CLERKS_PER_UNIT = 2;
/** Real files per unit, uploaded before the load: those up to 64 KiB are proved whole, larger ones by four 16 KiB ranges. */
const FILES_PER_UNIT = 25;
const FILE_KIB = [4, 16, 60, 200];
/** Catalog entries without bytes, so that lookups search an index of a realistic size (no check asks for them). */
const CATALOGUED = 100_000;

/** The share of the clients in each group. Closed loop: the share of requests follows each group's latency. */
const MIX = [
  ['check + prove', 0.4],
  ['check miss', 0.2],
  ['upload', 0.2],
  ['download', 0.2],
] as const;
type Group = (typeof MIX)[number][0];

/** A multipart/form-data body with the `md5` field and the `file`, as a script using the API sends it. */
function multipart(data: Buffer, name: string): { body: Buffer; type: string } {
  const boundary = `----load${randomBytes(8).toString('hex')}`;
  const head =
    `--${boundary}\r\nContent-Disposition: form-data; name="md5"\r\n\r\n${md5(data)}\r\n` +
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  return {
    body: Buffer.concat([Buffer.from(head), data, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    type: `multipart/form-data; boundary=${boundary}`,
  };
}

/**
 * `clients` concurrent clients for `seconds` against the real server process on the embedded store
 * (loopback), each waiting for its answer before its next request (closed loop): check + prove
 * pairs of archived files, checks of unknown content, small direct uploads (new and duplicate
 * content) and downloads of the unit's files, as 8 clerks of 4 units with API tokens. Reference:
 * GET /api/health from as many clients just before. The server's RSS is sampled every second.
 *
 * undici rather than autocannon: autocannon decodes every response body into a string (half its
 * CPU with 40 clients downloading 200 KiB files; in a trial of this mix every download timed
 * out), and it times a check and its prove apart only through the order of its internal callbacks. Here each
 * client is a plain loop, so check → prove is two awaits, every request is timed on its own and
 * response bodies are counted, not decoded.
 */
export async function benchLoad(clients = 200, seconds = 60, thinkMs = 0): Promise<LoadResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-load-'));
  const env = { ...process.env, DATA_DIR: dataDir, STORE: 'embedded', MONGODB_URI: '' };
  let server: BenchServer | undefined;
  try {
    const tokens = UNITS.map((unit, u) =>
      Array.from({ length: CLERKS_PER_UNIT }, (_, c) => benchToken(env, { username: `clerk${u}${c}`, ...unit })),
    );
    await seedCatalog(dataDir, CATALOGUED);
    // Soak runs (BENCH_HEAP=1): the live heap after warm-up and at the end, from heap snapshots.
    const heapDir =
      process.env.BENCH_HEAP === '1' ? fs.mkdtempSync(path.join(os.tmpdir(), 'archive-bench-heap-')) : undefined;
    if (heapDir)
      process.env.BENCH_SERVER_FLAGS = `${process.env.BENCH_SERVER_FLAGS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${heapDir}`;
    server = await startBenchServer(env);
    // One connection per client (kept alive, like a browser's): a client waits for each answer.
    const pool = new Pool(server.url, { connections: clients, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });

    // The units' real files, uploaded by their clerks the ordinary way.
    const byUnit: SeedFile[][] = [];
    for (const [u, unitTokens] of tokens.entries()) {
      byUnit.push([]);
      for (let i = 0; i < FILES_PER_UNIT; i++) {
        const data = randomBytes(FILE_KIB[i % FILE_KIB.length]! * 1024);
        const { body, type } = multipart(data, `unit${u}-${i}.bin`);
        const res = await pool.request({
          method: 'POST',
          path: '/api/files',
          headers: { authorization: `Bearer ${unitTokens[i % unitTokens.length]}`, 'content-type': type },
          body,
        });
        const answer = (await res.body.json()) as { fileId: string };
        if (res.statusCode !== 201)
          throw new Error(`seeding upload answered ${res.statusCode}: ${JSON.stringify(answer)}`);
        byUnit[u]!.push({
          fileId: answer.fileId,
          data,
          check: JSON.stringify({ md5: md5(data), sha256: sha256(data), size: data.length, name: 'again.bin' }),
        });
      }
    }
    const files = byUnit.flat();
    const smallFiles = files.filter((f) => f.data.length <= 16 * 1024);
    const accounts: LoadAccount[] = tokens.flatMap((unitTokens, u) =>
      unitTokens.map((token) => ({ token, unitFiles: byUnit[u]! })),
    );

    /**
     * One request, timed until its body has arrived, under `op`; JSON bodies are parsed, others
     * only counted. Undefined when it failed or `expected` (status, and `status` field for JSON) did not match.
     */
    const call = async (
      op: Op,
      a: LoadAccount,
      request: { method: 'GET' | 'POST'; path: string; json?: string; form?: Buffer },
      expected: [number, string?],
    ): Promise<Answer | undefined> => {
      const form = request.form && multipart(request.form, 'load.bin');
      const headers = {
        authorization: `Bearer ${a.token}`,
        ...(request.json ? { 'content-type': 'application/json' } : form ? { 'content-type': form.type } : {}),
      };
      const start = performance.now();
      try {
        const res = await pool.request({
          method: request.method,
          path: request.path,
          headers,
          body: request.json ?? form?.body,
        });
        let text = '';
        if (expected[1]) text = await res.body.text();
        else for await (const _ of res.body); // downloads: the bytes arrive, nobody decodes them
        op.latency.record(Math.max(1, Math.round((performance.now() - start) * 1000)));
        const answer = parse(text);
        if (res.statusCode === expected[0] && answer.status === expected[1]) return answer;
        op.failed('wrong', `${request.method} ${request.path} answered ${res.statusCode} ${text.slice(0, 200)}`);
      } catch (err) {
        const code = (err as { code?: string }).code ?? String(err);
        op.failed(/TIMEOUT/.test(code) ? 'timeouts' : 'socketErrors', `${request.method} ${request.path}: ${code}`);
      }
      return undefined;
    };

    const ops = {
      checkHit: new Op('check (hit)'),
      prove: new Op('prove'),
      checkMiss: new Op('check (miss)'),
      uploadNew: new Op('upload (new)'),
      uploadDuplicate: new Op('upload (duplicate)'),
      download: new Op('download'),
    };
    /** What one client of each group does, again and again. */
    const loops: Record<Group, (a: LoadAccount) => Promise<unknown>> = {
      // A clerk's browser: check a file the archive holds (from any unit), prove it with the ranges asked for.
      'check + prove': async (a) => {
        const file = pick(files);
        const claim = await call(ops.checkHit, a, { method: 'POST', path: '/api/uploads/check', json: file.check }, [
          200,
          'prove',
        ]);
        if (!claim) return;
        const digests = claim.ranges!.map((r) => md5(file.data.subarray(r.start, r.end)));
        await call(
          ops.prove,
          a,
          { method: 'POST', path: '/api/uploads/prove', json: JSON.stringify({ claimId: claim.claimId, digests }) },
          [200, 'duplicate'],
        );
      },
      'check miss': (a) => {
        const key = randomBytes(48).toString('hex');
        const json = JSON.stringify({
          md5: key.slice(0, 32),
          sha256: key.slice(32),
          size: 1 + Math.floor(Math.random() * 1e7),
          name: 'new.pdf',
        });
        return call(ops.checkMiss, a, { method: 'POST', path: '/api/uploads/check', json }, [200, 'upload']);
      },
      // New content of 1-8 KiB, then a small file the archive holds.
      upload: async (a) => {
        await call(
          ops.uploadNew,
          a,
          { method: 'POST', path: '/api/files', form: randomBytes(1024 + Math.floor(Math.random() * 7 * 1024)) },
          [201, 'stored'],
        );
        await call(ops.uploadDuplicate, a, { method: 'POST', path: '/api/files', form: pick(smallFiles).data }, [
          200,
          'duplicate',
        ]);
      },
      download: (a) => call(ops.download, a, { method: 'GET', path: `/api/files/${pick(a.unitFiles).fileId}` }, [200]),
    };
    /**
     * `count` clients, client i as account i mod 8, each running `loop` until `duration` has
     * passed, and thinking 0.5-1.5 × `thinkMs` after each answer (starting at a random point of
     * one think time, so they do not all ask at once).
     */
    const think = (factor: number) =>
      thinkMs > 0 ? new Promise((resolve) => setTimeout(resolve, thinkMs * factor)) : undefined;
    const run = async (count: number, duration: number, loop: (a: LoadAccount) => Promise<unknown>, first = 0) => {
      const end = performance.now() + duration * 1000;
      await Promise.all(
        Array.from({ length: count }, async (_, i) => {
          const account = accounts[(first + i) % accounts.length]!;
          await think(Math.random());
          while (performance.now() < end) {
            await loop(account);
            await think(0.5 + Math.random());
          }
        }),
      );
    };

    // The reference, just before the mix: as many clients asking for GET /api/health, after 2 s
    // unmeasured, as all the clients starting at once queue their first requests for seconds.
    const referenceSeconds = Math.min(10, Math.max(2, Math.round(seconds / 6)));
    const health = new Op('GET /api/health');
    const warmUp = new Op('warm-up');
    await run(clients, 2, (a) => call(warmUp, a, { method: 'GET', path: '/api/health' }, [200]));
    await run(clients, referenceSeconds, (a) => call(health, a, { method: 'GET', path: '/api/health' }, [200]));

    // The mix, sampling the server's RSS and the answers every second.
    const sizes = MIX.map(([, share]) => Math.max(1, Math.round(clients * share)));
    sizes[0]! += clients - sizes.reduce((a, b) => a + b, 0);
    const allOps = Object.values(ops);
    const answered = () => allOps.reduce((n, op) => n + op.latency.count, 0);
    const rssMb: number[] = [];
    const answersPerSecond: number[] = [];
    let lastAnswered = 0;
    const sampler = setInterval(() => {
      rssMb.push(server!.rssMb());
      answersPerSecond.push(answered() - lastAnswered);
      lastAnswered = answered();
    }, 1000);
    const logStart = server.logLineCount();
    const cpuStart = { server: server.cpuSeconds(), generator: process.cpuUsage() };
    const started = performance.now();
    const warmupSeconds = Math.min(heapDir ? 120 : 10, Math.floor(seconds / 3));
    const heaps: HeapCensus[] = [];
    const snapshots: LoadResult['snapshots'] = [];
    // Snapshots one after the other (each stalls the server a second or two), never two at once.
    const census = (at: number, before?: Promise<unknown>) =>
      new Promise((resolve) => setTimeout(resolve, at * 1000))
        .then(() => before)
        .then(async () => {
          const second = rssMb.length;
          const rssBefore = server!.rssMb();
          heaps.push(await heapCensus(server!, heapDir!));
          await new Promise((resolve) => setTimeout(resolve, 30_000));
          snapshots.push({ second, costMb: server!.rssMb() - rssBefore });
        });
    const firstHeap = heapDir ? census(warmupSeconds) : undefined;
    const halfway = Math.round((warmupSeconds + seconds) / 2);
    let rssJudgedFrom = warmupSeconds;
    const halfwayHeap = heapDir
      ? census(halfway, firstHeap).then(() => (rssJudgedFrom = Math.min(seconds - 1, rssMb.length)))
      : undefined;
    // Its failure is thrown where it is awaited, after the run: not an unhandled rejection now,
    // which would end this process with the server left running.
    halfwayHeap?.catch(() => {});
    await Promise.all(
      MIX.map(([group], g) =>
        run(
          sizes[g]!,
          seconds,
          loops[group],
          sizes.slice(0, g).reduce((a, b) => a + b, 0),
        ),
      ),
    );
    if (heapDir) {
      await halfwayHeap;
      heaps.push(await heapCensus(server, heapDir));
      fs.rmSync(heapDir, { recursive: true, force: true });
      // Printed at once too: an hour's figure must survive whatever comes after.
      console.log(
        `soak    live heap ${heaps.map((h) => `${h.totalMb.toFixed(1)} MB`).join(', ')} after warm-up (${warmupSeconds} s), half-way and at the end (${seconds} s)`,
      );
    }
    const elapsed = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const generatorCpu = process.cpuUsage(cpuStart.generator);
    const serverCpuSeconds = server.cpuSeconds() - cpuStart.server;
    await pool.close();
    // Every request of the mix is logged; under load the log falls behind (see loggedAtEnd), so
    // the times are read once it has caught up.
    const logged = () => server!.logLineCount() - logStart;
    const loggedAtEnd = logged();
    for (let waited = 0; logged() < answered() && waited < 30_000; waited += 200)
      await new Promise((resolve) => setTimeout(resolve, 200));
    // A soak's log is too long to read whole: its handling times are left out.
    const logLines = heapDir ? [] : server.logLines().slice(logStart);

    const opResults = allOps.map((op) => op.result(elapsed));
    return {
      clients,
      seconds,
      thinkMs,
      catalogued: CATALOGUED + files.length,
      accounts: accounts.length,
      units: UNITS.length,
      files: files.length,
      groups: MIX.map(([name], g) => ({ name, clients: sizes[g]! })),
      health: health.result(referenceSeconds),
      referenceSeconds,
      ops: opResults,
      perSecond: answered() / elapsed,
      errors: opResults.reduce((n, op) => n + op.wrong + op.socketErrors + op.timeouts, 0),
      rssMb,
      answersPerSecond,
      warmupSeconds,
      rssJudgedFrom,
      snapshots,
      heap:
        heaps.length === 3
          ? {
              afterWarmupMb: heaps[0]!.totalMb,
              halfwayMb: heaps[1]!.totalMb,
              endMb: heaps[2]!.totalMb,
              grew: heapGrowth(heaps[1]!, heaps[2]!),
            }
          : undefined,
      serverMs: handlingTimes(logLines, {
        check: /^POST \/api\/uploads\/check$/,
        prove: /^POST \/api\/uploads\/prove$/,
        upload: /^POST \/api\/files$/,
        download: /^GET \/api\/files\/[^/?]+$/,
      }),
      loggedAtEnd,
      serverCpuSeconds,
      generatorCpuSeconds: (generatorCpu.user + generatorCpu.system) / 1e6,
      serverErrors: logLines.filter((line) => /"level":(50|60)/.test(line)).slice(0, 5),
    };
  } finally {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
