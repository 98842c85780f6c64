import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseCsv } from 'csv-parse/sync';
import type { FileList, FileSummary } from '../shared/schemas.js';
import { md5, randomContent } from './support/content.js';
import { runImport, startImport, unprivilegedPrefix } from './support/importer.js';
import { freePort } from './support/process.js';
import { Client, TestServer } from './support/server.js';
import { embeddedTarget, tempDir } from './support/stores.js';
import { tusUpload } from './support/tus.js';

/** Writes `files` (path → bytes) under `root`, creating folders; paths may be raw bytes. */
function writeTree(root: string, files: Array<[string | Buffer, Uint8Array]>): void {
  for (const [name, data] of files) {
    const full = Buffer.isBuffer(name) ? Buffer.concat([Buffer.from(`${root}/`), name]) : path.join(root, name);
    fs.mkdirSync(path.dirname(full.toString()), { recursive: true });
    fs.writeFileSync(full, data);
  }
}

async function archiveFiles(client: Client): Promise<FileSummary[]> {
  const res = await client.fetch('/api/files?limit=200');
  assert.equal(res.status, 200);
  return ((await res.json()) as FileList).items;
}

async function download(client: Client, fileId: string): Promise<Buffer> {
  const res = await client.fetch(`/api/files/${fileId}`);
  assert.equal(res.status, 200);
  return Buffer.from(await res.arrayBuffer());
}

describe('bulk import of a legacy file-system archive (npm run import)', () => {
  let server: TestServer;
  let clerk: Client;
  let other: Client;
  let token: string;
  const work = tempDir('archive-import-');

  before(async () => {
    server = await TestServer.start(embeddedTarget);
    clerk = await server.tokenClient(await server.addAccount('importer', 'clerk'));
    other = await server.tokenClient(await server.addAccount('other-clerk', 'clerk'));
    token = clerk.credentials.bearer!;
  });
  after(async () => {
    await server.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  const common = () => ['--server', server.url, '--token', token, '--json'];

  // Root reads any file unless it can give up the capabilities that let it (setpriv, see the support module).
  const unreadableFiles =
    unprivilegedPrefix === undefined
      ? 'running as root without a way to drop CAP_DAC_OVERRIDE (setpriv), no file can be made unreadable to the importer'
      : false;

  it(
    'imports a tree with nested folders, duplicates within it and of archived content, and reports every odd file',
    { skip: unreadableFiles },
    async () => {
      const root = path.join(work, 'odd-tree');
      const notice = randomContent(50_000);
      const held = randomContent(20_000);
      const deep = Array.from({ length: 8 }, (_, i) => `第${i + 1}级档案目录的名称比较长`).join('/');
      const gbName = Buffer.from([0xb5, 0xb5, 0xb0, 0xb8, 0x2e, 0x74, 0x78, 0x74]); // "档案.txt" in GB18030
      const plain = {
        odd: randomContent(3000),
        newline: randomContent(2000),
        gb: randomContent(1000),
        deep: randomContent(4000),
        secret: randomContent(500),
      };
      writeTree(root, [
        ['backup/通知 (1).pdf', notice],
        ['docs/2019/通知.pdf', notice],
        ['docs/2019/copy of 通知.pdf', notice],
        ['already/held.pdf', held],
        [`odd names/spaces & 'quotes' "double" #1.txt`, plain.odd],
        ['line\nbreak.txt', plain.newline],
        [gbName, plain.gb],
        [`${deep}/报告.txt`, plain.deep],
        ['empty.txt', new Uint8Array(0)],
        ['secret.pdf', plain.secret],
        ['locked/inside.pdf', randomContent(100)],
      ]);
      assert.ok(Buffer.byteLength(path.join(root, deep, '报告.txt')) > 255, 'the deep path is longer than 255 bytes');
      fs.symlinkSync('already/held.pdf', path.join(root, 'link-to-held.pdf'));
      fs.symlinkSync('missing.pdf', path.join(root, 'dangling.pdf'));
      fs.symlinkSync('..', path.join(root, 'docs', 'loop'));
      execFileSync('mkfifo', [path.join(root, 'pipe')]);
      fs.chmodSync(path.join(root, 'secret.pdf'), 0o000);
      fs.chmodSync(path.join(root, 'locked'), 0o000);
      // Another clerk archived one of the documents before.
      assert.equal((await tusUpload(other, held)).status, 'stored');

      const run = await runImport([root, ...common(), '--journal', path.join(work, 'odd.jsonl')]);
      assert.equal(run.status, 1, `some files could not be imported: exit 1\n${run.stderr}`);
      const r = run.report!;
      assert.deepEqual(
        {
          seen: r.seen,
          uploaded: r.uploaded,
          instant: r.instant,
          duplicatesInTree: r.duplicatesInTree,
          emptyFiles: r.emptyFiles,
          legacyNames: r.legacyNames,
        },
        { seen: 15, uploaded: 6, instant: 1, duplicatesInTree: 3, emptyFiles: 1, legacyNames: 1 },
      );
      const uploadedBytes =
        notice.length + plain.odd.length + plain.newline.length + plain.gb.length + plain.deep.length;
      assert.equal(r.bytesSent, uploadedBytes);
      assert.equal(r.bytesSaved, 2 * notice.length + 2 * held.length);
      const reasons = Object.fromEntries(r.errors.map((e) => [e.path, e.reason]));
      assert.deepEqual(Object.keys(reasons).sort(), ['dangling.pdf', 'docs/loop', 'locked', 'pipe', 'secret.pdf']);
      assert.match(reasons['dangling.pdf']!, /broken symbolic link: its target missing\.pdf does not exist/);
      assert.match(reasons['docs/loop']!, /symbolic link loop/);
      assert.match(reasons['pipe']!, /not a regular file: a named pipe/);
      assert.match(reasons['secret.pdf']!, /permission denied/);
      assert.match(reasons['locked']!, /folder not read: permission denied/);
      for (const e of r.errors)
        assert.match(
          run.stderr,
          new RegExp(`error: ${e.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `),
          'each problem is also told as it happens',
        );

      // The archive holds each content once, byte for byte, counted once per file of the tree.
      const files = await archiveFiles(clerk);
      const byMd5 = new Map(files.map((f) => [f.fileMD5, f]));
      assert.equal(byMd5.get(md5(notice))?.myUploadCount, 3);
      assert.equal(byMd5.get(md5(held))?.myUploadCount, 2);
      assert.equal(byMd5.get(md5(plain.gb))?.fileName, '档案.txt', 'a GB18030 name is recorded as the Chinese it is');
      assert.equal(byMd5.get(md5(plain.deep))?.fileName, '报告.txt');
      assert.equal(byMd5.get(md5(new Uint8Array(0)))?.fileLength, 0);
      assert.equal(byMd5.get(md5(plain.secret)), undefined);
      assert.equal(files.length, 7);
      for (const data of [notice, plain.odd, plain.newline, plain.gb, plain.deep])
        assert.ok((await download(clerk, byMd5.get(md5(data))!.fileId)).equals(data));
      assert.equal(byMd5.get(md5(notice))?.contentType, 'application/pdf', 'the type is taken from the extension');
      assert.equal(byMd5.get(md5(plain.odd))?.fileName, `spaces & 'quotes' "double" #1.txt`, 'quotes survive the trip');
      // Small files travel many to a request.
      const uploads = await server.opened.store.audit.search({
        userName: 'importer',
        action: 'upload',
        limit: 50,
        offset: 0,
      });
      assert.deepEqual(uploads.items.map((e) => e.detail).sort(), Array(6).fill('batch: stored'));
    },
  );

  it('sends the files of a batch the archive fails as a whole one by one instead, each once', async () => {
    const root = path.join(work, 'batch-refused');
    const docs = Array.from({ length: 5 }, () => randomContent(10_000));
    writeTree(
      root,
      docs.map((data, i) => [`doc-${i}.pdf`, data]),
    );
    // A proxy in front of the archive that fails every batch upload, as a restarting instance would.
    const refused: string[] = [];
    const proxy = http.createServer((req, res) => {
      if (req.url === '/api/uploads/batch') {
        refused.push(req.url);
        req.resume();
        res
          .writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
          .end(JSON.stringify({ error: 'store_unavailable', message: 'restarting' }));
        return;
      }
      const upstream = http.request(
        `${server.url}${req.url}`,
        { method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
      const run = await runImport([
        root,
        '--server',
        url,
        '--token',
        token,
        '--json',
        '--journal',
        path.join(work, 'batch-refused.jsonl'),
      ]);
      assert.equal(run.status, 0, run.stderr);
      assert.deepEqual([run.report!.uploaded, run.report!.errors.length], [5, 0]);
      assert.ok(refused.length >= 3 && refused.length % 3 === 0, 'each batch was tried, and twice more, first');
    } finally {
      proxy.closeAllConnections();
      proxy.close();
    }
    const files = new Map((await archiveFiles(clerk)).map((f) => [f.fileMD5, f]));
    for (const data of docs) assert.equal(files.get(md5(data))?.myUploadCount, 1);
  });

  it('reports a file that changes while it is read, and imports nothing of it', async () => {
    const root = path.join(work, 'growing');
    writeTree(root, [
      ['stable.pdf', randomContent(1000)],
      ['growing.log', randomContent(32 * 1024 * 1024)],
    ]);
    // Something keeps writing to the file for as long as the import runs.
    const fd = fs.openSync(path.join(root, 'growing.log'), 'a');
    const writer = setInterval(() => fs.writeSync(fd, randomContent(64)), 1);
    try {
      const run = await runImport([root, ...common(), '--journal', path.join(work, 'growing.jsonl')]);
      assert.equal(run.status, 1);
      assert.equal(run.report!.uploaded, 1);
      assert.deepEqual(
        run.report!.errors.map((e) => e.path),
        ['growing.log'],
      );
      assert.match(run.report!.errors[0]!.reason, /changed (while it was being read|after it was hashed)/);
    } finally {
      clearInterval(writer);
      fs.closeSync(fd);
    }
    assert.ok(
      !(await archiveFiles(clerk)).some((f) => f.fileName === 'growing.log'),
      'nothing of the changing file is catalogued',
    );
  });

  it('a re-run after the importer was killed mid-file sends no completed file again and resumes the cut one', async () => {
    const root = path.join(work, 'resume');
    const big = randomContent(192 * 1024 * 1024);
    const small = Array.from({ length: 12 }, () => randomContent(30_000));
    writeTree(root, [
      ['a-big.bin', big],
      ...small.map((data, i): [string, Uint8Array] => [`small/${String(i).padStart(2, '0')}.pdf`, data]),
    ]);
    const journal = path.join(work, 'resume.jsonl');

    const first = startImport([root, ...common(), '--journal', journal, '--uploads', '2']);
    // Kill it once the archive holds part of the big file.
    const deadline = Date.now() + 60_000;
    let received = 0;
    while (Date.now() < deadline) {
      const sending = fs.existsSync(journal)
        ? fs
            .readFileSync(journal, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .find((j) => j.key === 'a-big.bin' && j.state === 'sending')
        : undefined;
      if (sending) {
        const head = await clerk.fetch(new URL(sending.url).pathname, {
          method: 'HEAD',
          headers: { 'tus-resumable': '1.0.0' },
        });
        received = Number(head.headers.get('upload-offset'));
        if (received > 0) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    first.child.kill('SIGKILL');
    await first.done;
    assert.ok(received > 0 && received < big.length, `killed mid-file (${received} of ${big.length} bytes received)`);
    const before = await archiveFiles(clerk);
    const doneBefore = small.filter((data) => before.some((f) => f.fileMD5 === md5(data))).length;

    const second = await runImport([root, ...common(), '--journal', journal]);
    assert.equal(second.status, 0, second.stderr);
    const r = second.report!;
    assert.equal(r.alreadyImported, doneBefore, 'files finished before the kill are skipped');
    assert.equal(r.uploaded, 13 - doneBefore);
    const smallSent = small.length - doneBefore;
    assert.ok(
      r.bytesSent <= big.length - received + smallSent * 30_000 + 4 * 1024 * 1024,
      `the big file resumed (sent ${r.bytesSent} bytes, ${received} were there already)`,
    );

    const after = await archiveFiles(clerk);
    for (const data of [big, ...small]) {
      const file = after.find((f) => f.fileMD5 === md5(data));
      assert.equal(file?.myUploadCount, 1, 'each file counted once over both runs');
    }
    assert.ok((await download(clerk, after.find((f) => f.fileMD5 === md5(big))!.fileId)).equals(big));

    const third = await runImport([root, ...common(), '--journal', journal]);
    assert.equal(third.status, 0);
    assert.deepEqual(
      [third.report!.alreadyImported, third.report!.uploaded, third.report!.bytesSent],
      [13, 0, 0],
      'a third run has nothing left to do',
    );
  });

  it('Ctrl-C stops cleanly: exit 130, the upload stays resumable, and the next run finishes it', async () => {
    const root = path.join(work, 'interrupt');
    const big = randomContent(128 * 1024 * 1024);
    writeTree(root, [['big.bin', big]]);
    const journal = path.join(work, 'interrupt.jsonl');
    const run = startImport([root, ...common(), '--journal', journal]);
    while (!(fs.existsSync(journal) && fs.readFileSync(journal, 'utf8').includes('"sending"')))
      await new Promise((resolve) => setTimeout(resolve, 5));
    run.child.kill('SIGINT');
    const stopped = await run.done;
    assert.equal(stopped.status, 130, stopped.stderr);
    assert.equal(stopped.report!.interrupted, true);
    assert.match(stopped.stdout, /Interrupted: run the same command again to continue/);
    assert.ok(!(await archiveFiles(clerk)).some((f) => f.fileMD5 === md5(big)), 'nothing half-imported');

    const again = await runImport([root, ...common(), '--journal', journal]);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(again.report!.uploaded, 1);
    assert.ok(again.report!.bytesSent < big.length + 1, 'not sent more than once in full');
    assert.equal((await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(big))?.myUploadCount, 1);
  });

  it('--dry-run lists identical files and files the archive holds, exactly, and records nothing', async () => {
    const root = path.join(work, 'dry');
    const [a, b, known] = [randomContent(1000), randomContent(2048), randomContent(3000)];
    writeTree(root, [
      ['一/a.pdf', a],
      ['二/a-copy.pdf', a],
      ['三/a (2).pdf', a],
      ['b.txt', b],
      ['known.pdf', known],
      ['known-again.pdf', known],
      ['new.pdf', randomContent(500)],
    ]);
    assert.equal((await tusUpload(other, known)).status, 'stored');
    const before = await archiveFiles(clerk);

    const run = await runImport([root, ...common(), '--dry-run']);
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.slice(0, -1), [
      'Identical files within the tree: 2 group(s)',
      `  2 files of 2.9 KB, MD5 ${md5(known)}, already in the archive:`,
      '    known-again.pdf',
      '    known.pdf',
      `  3 files of 1000 B, MD5 ${md5(a)}:`,
      '    一/a.pdf',
      '    三/a (2).pdf',
      '    二/a-copy.pdf',
      'Files the archive already holds: 2',
      '  known-again.pdf',
      '  known.pdf',
      'Dry run: nothing was uploaded. Files seen: 7',
      '  to upload:                   3',
      '  already in the archive:      1',
      '  duplicates within the tree:  3',
      '  errors:                      0',
      'Bytes sent: 0 B; deduplication would save: 7.8 KB',
    ]);
    const { seconds, ...report } = run.report!;
    assert.ok(seconds >= 0);
    assert.deepEqual(report, {
      seen: 7,
      uploaded: 3,
      instant: 1,
      duplicatesInTree: 3,
      alreadyImported: 0,
      skipped: 0,
      bytesSent: 0,
      bytesSaved: 2 * a.length + 2 * known.length,
      errors: [],
      emptyFiles: 0,
      legacyNames: 0,
      dryRun: true,
      interrupted: false,
    });
    assert.deepEqual(await archiveFiles(clerk), before, 'a dry run records nothing');
  });

  it('imports from a path table: record ids and names carried, each bad row reported, the rest imported', async () => {
    const root = path.join(work, 'legacy-share');
    const [one, two] = [randomContent(700), randomContent(800)];
    writeTree(root, [
      ['vol1/0001.pdf', one],
      ['vol1/0002.pdf', two],
    ]);
    const manifest = path.join(work, 'records.csv');
    fs.writeFileSync(
      manifest,
      [
        'record_id,path,name',
        'R-1,vol1/0001.pdf,"1998年 土地证明, 第一页.pdf"',
        'R-2,vol1/0002.pdf,',
        'R-3,vol1/0002.pdf,same file again.pdf',
        'R-4,,nothing.pdf',
        'R-5,vol1/missing.pdf,gone.pdf',
        'R-6,vol1,a folder.pdf',
        'R-7,vol1/0001.pdf',
        'R-8,vol"1/0001.pdf,stray quote.pdf',
      ].join('\n'),
    );
    const results = path.join(work, 'results.csv');
    const importTable = () =>
      runImport([
        '--manifest',
        manifest,
        root,
        ...common(),
        '--journal',
        path.join(work, 'manifest.jsonl'),
        '--results',
        results,
      ]);
    const run = await importTable();
    assert.equal(run.status, 1);
    const r = run.report!;
    assert.deepEqual([r.uploaded, r.duplicatesInTree], [2, 1]);
    const byRecord = Object.fromEntries(r.errors.map((e) => [e.recordId ?? e.path, e.reason]));
    assert.match(byRecord['R-4']!, /line 5: no path; row skipped/);
    assert.match(byRecord['R-5']!, /line 6: no such file/);
    assert.match(byRecord['R-6']!, /line 7: a folder, not a file/);
    assert.match(byRecord['R-7']!, /line 8: 2 columns where the header has 3/);
    assert.match(byRecord['records.csv']!, /quote/i);
    assert.equal(r.errors.length, 5);
    const files = await archiveFiles(clerk);
    assert.equal(
      files.find((f) => f.fileMD5 === md5(one))?.fileName,
      '1998年 土地证明, 第一页.pdf',
      'the name column is the archived name',
    );
    assert.equal(
      files.find((f) => f.fileMD5 === md5(two))?.myUploadCount,
      2,
      'two records of one file: two uploads, one copy',
    );

    // The results map each record to the archive's file id (or say why not).
    const rows = parseCsv<Record<string, string>>(fs.readFileSync(results), { bom: true, columns: true });
    const byId = (id: string) => rows.find((row) => row.record_id === id);
    assert.equal(rows.length, 8);
    const twoId = files.find((f) => f.fileMD5 === md5(two))!.fileId;
    assert.deepEqual(
      [byId('R-1')?.outcome, byId('R-1')?.file_id],
      ['uploaded', files.find((f) => f.fileMD5 === md5(one))!.fileId],
    );
    // Whichever of the two rows of one file is hashed first is sent; the other is recorded as its copy.
    assert.deepEqual([byId('R-2')?.outcome, byId('R-3')?.outcome].sort(), ['duplicateInTree', 'uploaded']);
    assert.deepEqual([byId('R-2')?.file_id, byId('R-3')?.file_id], [twoId, twoId]);
    assert.deepEqual([byId('R-4')?.outcome, byId('R-4')?.file_id], ['error', '']);
    assert.match(byId('R-5')!.reason!, /no such file/);
    const again = await importTable();
    assert.equal(again.report!.alreadyImported, 3);
    const rerun = parseCsv<Record<string, string>>(fs.readFileSync(results), { bom: true, columns: true });
    assert.deepEqual(rerun.find((row) => row.record_id === 'R-1')?.outcome, 'alreadyImported');
    assert.equal(
      rerun.find((row) => row.record_id === 'R-1')?.file_id,
      files.find((f) => f.fileMD5 === md5(one))!.fileId,
      'a re-run still names the file id',
    );
  });

  it('records two rows naming one file as two uploads however far apart they are in the table, also on a re-run', async () => {
    const root = path.join(work, 'far-apart');
    const shared = randomContent(900);
    const others = Array.from({ length: 12 }, () => randomContent(600));
    writeTree(root, [
      ['shared.pdf', shared],
      ...others.map((data, i): [string, Uint8Array] => [`other-${i}.pdf`, data]),
    ]);
    const manifest = path.join(work, 'far-apart.csv');
    fs.writeFileSync(
      manifest,
      ['id,path', 'A,shared.pdf', ...others.map((_, i) => `O${i},other-${i}.pdf`), 'Z,shared.pdf'].join('\n'),
    );
    const journal = path.join(work, 'far-apart.jsonl');
    // One file at a time: the first row is long done when the last is read.
    const run = await runImport([
      '--manifest',
      manifest,
      root,
      ...common(),
      '--journal',
      journal,
      '--threads',
      '1',
      '--uploads',
      '1',
    ]);
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual([run.report!.uploaded, run.report!.duplicatesInTree, run.report!.alreadyImported], [13, 1, 0]);
    assert.doesNotMatch(run.stderr, /Warning/, 'no listener left behind per file (Node warns past 10)');
    assert.equal((await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(shared))?.myUploadCount, 2);
    const again = await runImport(['--manifest', manifest, root, ...common(), '--journal', journal]);
    assert.deepEqual(
      [again.report!.alreadyImported, again.report!.uploaded],
      [14, 0],
      'both rows are known to the journal',
    );
  });

  it('skips files this account uploaded into its unit before, counted nowhere and listed; --count-again counts them', async () => {
    const root = path.join(work, 'sent-before');
    const [fresh, others, mine, alsoMine] = [
      randomContent(610),
      randomContent(620),
      randomContent(630),
      randomContent(640),
    ];
    writeTree(root, [
      ['new.pdf', fresh],
      ['theirs.pdf', others],
      ['mine.pdf', mine],
      ['copy/mine.pdf', mine],
      ['also-mine.pdf', alsoMine],
    ]);
    // Sent before by this account (in the browser, say: no journal knows them), and one by a colleague.
    for (const data of [mine, alsoMine]) assert.equal((await tusUpload(clerk, data)).status, 'stored');
    assert.equal((await tusUpload(other, others)).status, 'stored');
    const myCount = async (data: Uint8Array) =>
      (await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(data))?.myUploadCount;
    const results = path.join(work, 'sent-before.csv');
    const importer = (await server.store.accounts.findByUsername('importer'))!;
    const claimsHeld = () => server.store.claims.countOutstanding(importer.id, new Date());
    const heldBefore = await claimsHeld();

    const run = await runImport([
      root,
      ...common(),
      '--journal',
      path.join(work, 'sent-before-1.jsonl'),
      '--results',
      results,
    ]);
    assert.equal(run.status, 0, run.stderr);
    const r = run.report!;
    assert.deepEqual(
      [r.uploaded, r.instant, r.duplicatesInTree, r.skipped],
      [1, 1, 0, 3],
      'the new file sent, the colleague’s counted, this account’s own three (a copy among them) skipped',
    );
    assert.match(
      run.stdout,
      /skipped, you uploaded them into your unit before: 3 \(counted nowhere; --count-again counts them\)/,
    );
    assert.deepEqual([await myCount(mine), await myCount(alsoMine)], [1, 1], 'counted nowhere');
    assert.equal(await claimsHeld(), heldBefore, 'the archive made no claim for a skipped file');
    const rows = parseCsv<Record<string, string>>(fs.readFileSync(results), { bom: true, columns: true });
    const mineId = (await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(mine))!.fileId;
    assert.deepEqual(
      rows
        .filter((row) => row.outcome === 'skipped')
        .map((row) => [row.path, row.file_id])
        .sort(),
      [
        ['also-mine.pdf', (await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(alsoMine))!.fileId],
        ['copy/mine.pdf', mineId],
        ['mine.pdf', mineId],
      ],
    );
    assert.match(
      rows.find((row) => row.path === 'mine.pdf')!.reason!,
      /uploaded into this unit by this account before/,
    );

    const again = await runImport([
      root,
      ...common(),
      '--journal',
      path.join(work, 'sent-before-2.jsonl'),
      '--count-again',
    ]);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(
      [again.report!.uploaded, again.report!.instant, again.report!.duplicatesInTree, again.report!.skipped],
      [0, 4, 1, 0],
    );
    assert.deepEqual([await myCount(mine), await myCount(alsoMine), await myCount(fresh)], [3, 2, 2]);
  });

  it('runs as `npm run archive -- import` too, as scripts written before `npm run import` call it', async () => {
    const root = path.join(work, 'through-archive');
    const data = randomContent(5000);
    writeTree(root, [['kept.bin', data]]);
    const run = await runImport([root, ...common()], { viaArchiveCommand: true });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.report!.uploaded, 1);
    assert.equal((await archiveFiles(clerk)).find((f) => f.fileMD5 === md5(data))?.myUploadCount, 1);
    const usage = await runImport([root, '--token', token], { viaArchiveCommand: true });
    assert.deepEqual([usage.status, /--server <url> is required/.test(usage.stderr)], [2, true], usage.stderr);
  });

  it('refuses wrong usage, an unreachable server and a refused token with exit 2 and a clear message', async () => {
    const root = path.join(work, 'usage');
    fs.mkdirSync(root, { recursive: true });
    const noServer = await runImport([root, '--token', token]);
    assert.deepEqual([noServer.status, /--server <url> is required/.test(noServer.stderr)], [2, true], noServer.stderr);
    const badUrl = await runImport([root, '--server', 'archive.example', '--token', token]);
    assert.match(badUrl.stderr, /must be an http:\/\/ or https:\/\/ address/);
    const refused = await runImport([root, '--server', server.url, '--token', 'adt_000000000000_nope']);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /API token/);
    const unreachable = await runImport([root, '--server', `http://127.0.0.1:${await freePort()}`, '--token', token]);
    assert.equal(unreachable.status, 2);
    assert.match(unreachable.stderr, /did not answer \(ECONNREFUSED\)/);
    const aFile = path.join(work, 'a-file.txt');
    fs.writeFileSync(aFile, 'not a folder');
    const notADir = await runImport([aFile, '--server', server.url, '--token', token]);
    assert.equal(notADir.status, 2);
    assert.match(notADir.stderr, /is not a directory/);
    const noPathColumn = path.join(work, 'no-path.csv');
    fs.writeFileSync(noPathColumn, 'id,name\nR-1,a.pdf\n');
    const table = await runImport(['--manifest', noPathColumn, '--server', server.url, '--token', token]);
    assert.equal(table.status, 2);
    assert.match(table.stderr, /no-path\.csv has no "path" column in its header row \(id, name\)/);
  });
});
