import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { md5, randomContent } from './support/content.js';
import {
  addAccount,
  clerkToken,
  createToken,
  EMBEDDED_STORE,
  freePort,
  killServer,
  processStore,
  runServerToExit,
  SERVER_MAIN,
  startServer,
  stopServer,
} from './support/process.js';
import type { ProcessStore, Started } from './support/process.js';
import { Client } from './support/server.js';
import { embeddedTarget, storeTargets, tempDir } from './support/stores.js';
import { patchRequest, TUS, tusMetadata, tusRequest, tusUpload, uploadPath } from './support/tus.js';

const CLI = new URL('../server/cli/archive.js', import.meta.url).pathname;

/** The archive command without blocking this process (uploads go on meanwhile). */
async function cliAsync(
  args: string[],
  env: Record<string, string>,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [status] = await once(child, 'exit');
  return { status: status as number | null, stdout, stderr };
}

async function upload(client: Client, name: string, data: Buffer): Promise<string> {
  const res = await client.upload(name, data);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return (await res.json()).fileId as string;
}

async function download(client: Client, fileId: string): Promise<Buffer> {
  const res = await client.fetch(`/api/files/${fileId}`);
  assert.equal(res.status, 200, fileId);
  return Buffer.from(await res.arrayBuffer());
}

/** Opens a PATCH of all of `data` and sends its `first` bytes; the request stays open. */
function startPatch(url: string, uploadPath: string, token: string, data: Buffer, first: number) {
  const req = patchRequest(url, uploadPath, token, 0, data.length);
  // The server answers "100 Continue" as it takes the request in: from then on it is in progress
  // (a busy machine can take a while to get there, and a signal before it finds no request).
  req.setHeader('expect', '100-continue');
  const arrived = once(req, 'continue');
  const answer = new Promise<http.IncomingMessage | Error>((resolve) => {
    req.on('response', resolve);
    req.on('error', resolve);
  });
  req.write(data.subarray(0, first));
  return { req, arrived, answer };
}

/** Resolves once the server process has written `text` to its log. */
function logged(child: Started['child'], text: string): Promise<void> {
  let out = '';
  return new Promise((resolve) =>
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(text)) resolve();
    }),
  );
}

describe('embedded store backup and restore (archive backup / restore)', () => {
  let store: ProcessStore;
  let server: Started;
  let client: Client;
  const backupDir = tempDir('archive-backup-');
  const restoredDir = tempDir('archive-restored-');
  before(async () => {
    store = processStore(embeddedTarget);
    client = new Client('', { bearer: clerkToken(store.env) });
    server = await startServer({ ...store.env, GC_INTERVAL_SECONDS: '0', VERIFY_INTERVAL_HOURS: '0' });
    client = new Client(server.url, client.credentials);
  });
  after(async () => {
    await killServer(server);
    await store.dispose();
    for (const dir of [backupDir, restoredDir]) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('backs up online while clerks upload, and the restored archive serves the same files, accounts and counts', async () => {
    const files = new Map<string, Buffer>();
    for (let i = 0; i < 12; i++) {
      const data = randomContent(i * 97_000 + 1);
      files.set(await upload(client, `档案-${i}.pdf`, data), data);
    }
    const before = new Set(files.keys());
    await upload(client, '档案-0-copy.pdf', files.values().next().value!);
    // An unfinished resumable upload: its bytes are not part of the archive yet.
    const created = await tusRequest(client, TUS, 'POST', {
      'upload-length': '100000',
      'upload-metadata': tusMetadata({ filename: 'half.pdf' }),
    });
    const half = uploadPath(created);
    assert.equal(
      (
        await tusRequest(
          client,
          half,
          'PATCH',
          { 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
          randomContent(40_000),
        )
      ).status,
      204,
    );

    // Uploads go on during the backup.
    let uploading = true;
    const during = (async () => {
      for (let i = 0; uploading; i++) {
        const data = randomContent(50_000 + i);
        files.set(await upload(client, `during-${i}.pdf`, data), data);
      }
    })();
    const backup = await cliAsync(['backup', backupDir], store.env);
    uploading = false;
    await during;
    assert.equal(backup.status, 0, backup.stderr);
    const [, count] = /^backup of (\d+) file\(s\)/.exec(backup.stdout) ?? [];
    assert.ok(Number(count) >= before.size, backup.stdout);

    // Brought up to date later: only files new since are copied.
    for (let i = 0; i < 3; i++) {
      const data = randomContent(20_000 + i);
      files.set(await upload(client, `after-${i}.pdf`, data), data);
    }
    const again = await cliAsync(['backup', backupDir], store.env);
    assert.equal(again.status, 0, again.stderr);
    const [, total, copied] =
      /^backup of (\d+) file\(s\).*\((\d+) file\(s\), \d+ bytes copied this time\)/.exec(again.stdout) ?? [];
    assert.equal(Number(total), files.size, again.stdout);
    assert.ok(Number(copied) >= 3 && Number(copied) < files.size, again.stdout);

    const restoredEnv = { DATA_DIR: restoredDir, ...EMBEDDED_STORE };
    const restore = await cliAsync(['restore', backupDir], restoredEnv);
    assert.equal(restore.status, 0, restore.stderr);
    assert.match(restore.stdout, new RegExp(`^restored ${files.size} file\\(s\\)`));
    const restored = await startServer({ ...restoredEnv, GC_INTERVAL_SECONDS: '0', VERIFY_INTERVAL_HOURS: '0' });
    try {
      const same = new Client(restored.url, client.credentials); // the token was restored with the accounts
      for (const [fileId, data] of files) assert.equal(md5(await download(same, fileId)), md5(data), fileId);
      const listed = await (await same.fetch('/api/files?limit=200')).json();
      assert.equal(listed.total, files.size);
      const first = listed.items.find((f: { fileName: string }) => f.fileName === '档案-0-copy.pdf');
      assert.equal(first?.myUploadCount, 2, 'the ledger came along');
      assert.equal((await tusRequest(same, half, 'HEAD')).status, 404, 'an unfinished upload is not in a backup');
    } finally {
      await stopServer(restored);
    }
    const verify = await cliAsync(['verify'], restoredEnv);
    assert.equal(verify.status, 0, verify.stdout + verify.stderr);
  });

  // The archive command runs asynchronously here: a blocked event loop would miss the server
  // closing idle keep-alive connections, and the next request would meet a dead one.
  it('refuses to restore over an archive, and points MongoDB users to mongodump, in one line each', async () => {
    const over = await cliAsync(['restore', backupDir], store.env);
    assert.equal(over.status, 2);
    assert.match(over.stderr, /^archive: DATA_DIR .* already holds an archive; restore into an empty directory/);
    const notBackup = await cliAsync(['restore', restoredDir], { DATA_DIR: tempDir(), ...EMBEDDED_STORE });
    assert.equal(notBackup.status, 2);
    assert.match(notBackup.stderr, /is not a complete archive backup/);
    const mongo = await cliAsync(['backup', backupDir], {
      STORE: 'mongodb',
      MONGODB_URI: 'mongodb://127.0.0.1:1/archive',
    });
    assert.equal(mongo.status, 2);
    assert.match(mongo.stderr, /mongodump/);
    assert.equal((await cliAsync(['backup'], store.env)).status, 2);
  });

  it('verifies the archive from the command line: exit code 0 when intact, 1 naming damaged files, --json for scripts', async () => {
    const ok = await cliAsync(['verify'], store.env);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^passed: \d+ file\(s\), \d+ bytes checked; 0 missing, 0 corrupted$/m);
    const victim = await upload(client, '损坏.pdf', randomContent(300_000));
    const file = path.join(store.env.DATA_DIR!, 'content', victim.slice(0, 2), victim.slice(2, 4), victim);
    fs.truncateSync(file, 270_000);
    const bad = await cliAsync(['verify', '--json'], store.env);
    assert.equal(bad.status, 1);
    const result = JSON.parse(bad.stdout.trim().split('\n').pop()!);
    assert.equal(result.state, 'failed');
    assert.deepEqual(
      result.problems.map((p: { fileId: string; kind: string; chunk: number }) => [p.fileId, p.kind, p.chunk]),
      [[victim, 'missing', 1]],
    );
    // A backup of a damaged archive still completes, keeps the files as they are, and names file
    // and chunk: bytes missing, and a byte changed on disk (found by the chunk checksums).
    const changed = await upload(client, '改动.pdf', randomContent(300_000));
    const changedFile = path.join(store.env.DATA_DIR!, 'content', changed.slice(0, 2), changed.slice(2, 4), changed);
    const bytes = fs.readFileSync(changedFile);
    bytes[270_000]! ^= 0xff;
    fs.writeFileSync(changedFile, bytes);
    const backupDir = tempDir('archive-backup-damaged-');
    const backup = await cliAsync(['backup', backupDir], store.env);
    assert.equal(backup.status, 1);
    assert.match(backup.stderr, /2 file\(s\) were already damaged in the archive/);
    assert.ok(backup.stderr.includes(`${victim} chunk 1 (bytes missing)`), backup.stderr);
    assert.ok(backup.stderr.includes(`${changed} chunk 1 (does not match its checksum)`), backup.stderr);
    assert.deepEqual(
      fs.readFileSync(path.join(backupDir, 'content', changed.slice(0, 2), changed.slice(2, 4), changed)),
      bytes,
      'backed up as it is',
    );
    fs.rmSync(backupDir, { recursive: true, force: true });
  });
});

for (const target of storeTargets) {
  describe(`graceful shutdown (${target.name} store)`, { skip: target.skip }, () => {
    let store: ProcessStore;
    let token: string;
    before(() => {
      store = processStore(target);
      token = clerkToken(store.env);
    });
    after(() => store.dispose());

    const createUpload = async (url: string, data: Buffer) => {
      const created = await tusRequest(new Client(url, { bearer: token }), TUS, 'POST', {
        'upload-length': String(data.length),
        'upload-metadata': tusMetadata({ filename: 'shutdown.pdf' }),
      });
      assert.equal(created.status, 201);
      return uploadPath(created);
    };

    it('lets a PATCH in progress finish within the grace period, then exits 0', async () => {
      const server = await startServer({ ...store.env, SHUTDOWN_GRACE_SECONDS: '30', VERIFY_INTERVAL_HOURS: '0' });
      const data = randomContent(3 * 1024 * 1024);
      const uploadPath = await createUpload(server.url, data);
      const patch = startPatch(server.url, uploadPath, token, data, 1024 * 1024);
      await patch.arrived;
      const stopping = logged(server.child, 'shutting down');
      server.child.kill('SIGTERM');
      // The rest comes once the server is stopping.
      await stopping;
      patch.req.end(data.subarray(1024 * 1024));
      const answer = await patch.answer;
      assert.ok(!(answer instanceof Error), answer instanceof Error ? answer.message : '');
      assert.equal(answer.statusCode, 204);
      assert.equal(answer.headers['archive-status'], 'stored');
      const [code] = await once(server.child, 'exit');
      assert.equal(code, 0);
    });

    it('cuts off a PATCH still running after the grace period, keeping every byte that arrived and freeing its lock', async () => {
      const port = await freePort();
      const env = { ...store.env, PORT: String(port), SHUTDOWN_GRACE_SECONDS: '1', VERIFY_INTERVAL_HOURS: '0' };
      let server = await startServer(env);
      const data = randomContent(4 * 1024 * 1024);
      const uploadPath = await createUpload(server.url, data);
      // Less than one checkpoint batch: only an orderly stop records these bytes.
      const sent = 300_000;
      const patch = startPatch(server.url, uploadPath, token, data, sent);
      await patch.arrived;
      const started = Date.now();
      server.child.kill('SIGTERM');
      const [code] = await once(server.child, 'exit');
      assert.equal(code, 0);
      // A safety net: a stop that waited for the PATCH would wait forever (its client sends no more).
      assert.ok(Date.now() - started < 60_000, 'within the grace period and the drain');
      assert.ok((await patch.answer) instanceof Error, 'the cut-off request gets no answer');

      server = await startServer(env);
      try {
        const client = new Client(server.url, { bearer: token });
        const head = await tusRequest(client, uploadPath, 'HEAD');
        assert.equal(head.headers.get('upload-offset'), String(sent));
        // The lock was freed: the upload continues at once, without a 423.
        const result = await tusUpload(client, data, { uploadUrl: `${server.url}${uploadPath}` });
        assert.equal(result.status, 'stored');
        assert.equal(md5(await download(client, result.fileId!)), md5(data));
      } finally {
        await stopServer(server);
      }
    });
  });
}

describe('start-up with an unreachable store', () => {
  // The MongoDB driver (25 MB of code) is loaded before the server starts. The server counts
  // STORE_CONNECT_TIMEOUT_SECONDS from before its first attempt loads the driver, and on a busy
  // machine the loading took most of 3 s: one attempt, no retry. Tested here is the retrying.
  const DRIVER_LOADED = {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${import.meta.resolve('mongodb')}`,
  };

  it('retries an unreachable MongoDB with backoff, then gives up with one line and exit code 2', async () => {
    const port = await freePort();
    const started = Date.now();
    const r = runServerToExit({
      STORE: 'mongodb',
      ...DRIVER_LOADED,
      MONGODB_URI: `mongodb://127.0.0.1:${port}/archive`,
      STORE_CONNECT_TIMEOUT_SECONDS: '3',
    });
    assert.equal(r.status, 2);
    assert.match(
      r.stderr,
      /^archive: cannot reach MongoDB at MONGODB_URI: .* \(gave up after [2-9] attempt\(s\) in 3 s; STORE_CONNECT_TIMEOUT_SECONDS\)\n$/,
    );
    assert.ok(Date.now() - started >= 2500);
    const retries = r.stdout.split('\n').filter((l) => l.includes('retrying'));
    assert.ok(retries.length >= 1, r.stdout);
    assert.equal(JSON.parse(retries[0]!).level, 40);
  });

  it('stops at once on SIGTERM while it still waits for the store (a container stopped during start-up)', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [SERVER_MAIN], {
      env: {
        ...process.env,
        ...DRIVER_LOADED,
        PORT: '0',
        STORE: 'mongodb',
        MONGODB_URI: `mongodb://127.0.0.1:${port}/archive`,
        // Long, so that "at once" is far from "once it gave up", also on a busy machine.
        STORE_CONNECT_TIMEOUT_SECONDS: '60',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Waiting for the store: its first attempt failed and it waits to try again.
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stdout.includes('retrying')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${code}) before retrying: ${stderr}`)));
    });
    const signalled = Date.now();
    child.kill('SIGTERM');
    const [code, signal] = await once(child, 'exit');
    assert.deepEqual([code, signal], [0, null], 'exits by itself, not killed by the signal');
    assert.ok(Date.now() - signalled < 30_000, `stopped ${Date.now() - signalled} ms after the signal`);
    assert.match(stdout, /stopping during start-up/);
  });

  it('does not retry settings that cannot work', () => {
    const r = runServerToExit({
      STORE: 'mongodb',
      MONGODB_URI: 'mongodb://127.0.0.1:1/archive?maxPoolSize=-1',
      STORE_CONNECT_TIMEOUT_SECONDS: '60',
    });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^archive: MONGODB_URI is not valid: maxPoolSize/);
  });
});

describe('the fixity check in a running server', () => {
  it('does not hold up requests while it checks many files whose bytes are gone', async () => {
    const store = processStore(embeddedTarget);
    addAccount(store.env, 'chief', { role: 'admin', unit: 'archive' });
    const admin = createToken(store.env, 'chief');
    // Catalog entries without content files: each check fails at once, without waiting for I/O.
    const db = new Database(path.join(store.env.DATA_DIR!, 'archive.sqlite'));
    const insert = db.prepare(
      "INSERT INTO catalog (file_id, md5, sha256, length, chunk_size, chunk_count, file_name, content_type, upload_date) VALUES (?, ?, ?, 100, 261120, 1, 'gone.pdf', 'application/pdf', 0)",
    );
    db.transaction(() => {
      for (let i = 0; i < 12_000; i++)
        insert.run(randomBytes(12).toString('hex'), randomBytes(16).toString('hex'), randomBytes(32).toString('hex'));
    })();
    db.close();
    const server = await startServer({ ...store.env, VERIFY_INTERVAL_HOURS: '0', GC_INTERVAL_SECONDS: '0' });
    try {
      const client = new Client(server.url, { bearer: admin });
      assert.equal((await client.fetch('/api/verification', { method: 'POST' })).status, 202);
      // Counted, not timed: a check that starved the event loop would answer nothing until its
      // end, whereas how long one answer takes depends on what else the machine is doing.
      let slowest = 0;
      let answeredWhileRunning = 0;
      let state = 'running';
      for (const until = Date.now() + 600_000; state === 'running' && Date.now() < until;) {
        const started = performance.now();
        assert.equal((await fetch(`${server.url}/api/health`)).status, 200);
        slowest = Math.max(slowest, performance.now() - started);
        state = (await (await client.fetch('/api/verification')).json()).last?.state ?? 'running';
        if (state === 'running') answeredWhileRunning += 1;
      }
      const { last } = await (await client.fetch('/api/verification')).json();
      assert.equal(last.missing, 12_000);
      assert.ok(
        answeredWhileRunning >= 3,
        `requests answered while the check ran: ${answeredWhileRunning} (the slowest took ${slowest.toFixed(0)} ms)`,
      );
    } finally {
      await stopServer(server);
      await store.dispose();
    }
  });
});
