import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ReceiptRequest } from '../../shared/receipts.js';
import type {
  BatchFileResult,
  OwnUpload,
  ProofResult,
  UploadCheckRequest,
  UploadCheckResult,
} from '../../shared/schemas.js';
import {
  FolderUpload,
  SMALL_FILE_MAX_BYTES,
  type UploadApi,
  type UploadHasher,
} from '../../client/src/upload/folder-upload.js';
import { MemoryJournal } from '../../client/src/upload/upload-journal.js';
import { NetworkError } from '../../client/src/errors.js';

/**
 * The page's upload pipeline against an archive simulated in memory: what it sends, in how many
 * requests, and what a reload in the middle does.
 */

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
const bytesOf = async (blob: Blob) => new Uint8Array(await blob.arrayBuffer());

const hasher: UploadHasher & { hashed: number } = {
  size: 2,
  hashed: 0,
  async hash(file) {
    this.hashed++;
    const bytes = await bytesOf(file);
    return { md5: md5(bytes), sha256: sha256(bytes), size: bytes.length };
  },
  async hashSmall(files) {
    return Promise.all(files.map((f) => this.hash(f, {})));
  },
  async proofs(file, ranges) {
    const bytes = await bytesOf(file);
    return ranges.map((r) => md5(bytes.subarray(r.start, r.end)));
  },
};

/** An archive in memory: contents by digest, counts by key (each key counted once). */
class FakeArchive implements UploadApi {
  readonly held = new Map<string, Uint8Array>();
  readonly counted = new Map<string, string>();
  /** This clerk's own uploads into its unit, by content (what a check tells it). */
  readonly own = new Map<string, OwnUpload>();
  readonly calls = { checks: [] as string[][], proofs: [] as string[][], batch: [] as string[][] };
  #claims = new Map<string, { content: string; key: string }>();
  /** Makes the next calls of a kind fail or never answer (after the archive did its work). */
  trouble: Partial<Record<'batch' | 'proofs', 'lost' | 'network'>> = {};
  /** Holds each check and batch request until it settles (lets a test see what the page gathers meanwhile). */
  gate: (() => Promise<void>) | undefined;

  hold(data: Uint8Array): void {
    this.held.set(`${md5(data)}:${sha256(data)}`, data);
  }

  async checks(files: UploadCheckRequest[]): Promise<UploadCheckResult[]> {
    this.calls.checks.push(files.map((f) => f.name));
    await this.gate?.();
    return files.map((f) => {
      const content = `${f.md5}:${f.sha256}`;
      if (!this.held.has(content)) return { status: 'upload' };
      const claimId = randomBytes(12).toString('hex');
      this.#claims.set(claimId, { content, key: `claim:${claimId}` });
      const ownUpload = this.own.get(content);
      return {
        status: 'prove',
        claimId,
        ranges: [{ start: 0, end: Math.min(4, f.size) }],
        ...(ownUpload ? { ownUpload } : {}),
      };
    });
  }

  async proofs(proofs: Array<{ claimId: string; digests: string[] }>): Promise<ProofResult[]> {
    this.calls.proofs.push(proofs.map((p) => p.claimId));
    const results = proofs.map((p): ProofResult => {
      const claim = this.#claims.get(p.claimId);
      if (!claim) return { status: 'rejected', error: 'claim_rejected', message: 'unknown claim' };
      const bytes = this.held.get(claim.content)!;
      if (p.digests[0] !== md5(bytes.subarray(0, 4)))
        return { status: 'rejected', error: 'claim_rejected', message: 'wrong' };
      this.counted.set(claim.key, claim.content);
      this.#countOwn(claim.content);
      return { status: 'duplicate', fileId: claim.content.slice(0, 24), uploadCount: this.counted.size };
    });
    return this.#answer('proofs', results);
  }

  async batch(files: Parameters<UploadApi['batch']>[0]): Promise<BatchFileResult[]> {
    this.calls.batch.push(files.map((f) => f.name));
    await this.gate?.();
    const results: BatchFileResult[] = [];
    for (const f of files) {
      const bytes = await bytesOf(f.file);
      if (md5(bytes) !== f.md5) {
        results.push({ status: 'failed', error: 'checksum_mismatch', message: 'changed' });
        continue;
      }
      const content = `${f.md5}:${f.sha256}`;
      const stored = !this.held.has(content);
      this.held.set(content, bytes);
      this.counted.set(`file:${f.key}`, content);
      this.#countOwn(content);
      results.push({ status: stored ? 'stored' : 'duplicate', fileId: content.slice(0, 24), uploadCount: 1 });
    }
    return this.#answer('batch', results);
  }

  #countOwn(content: string): void {
    const earlier = this.own.get(content);
    this.own.set(content, {
      fileId: content.slice(0, 24),
      lastUploadTime: new Date().toISOString(),
      uploadCount: (earlier?.uploadCount ?? 0) + 1,
    });
  }

  /** Counts of the ledger: uploads counted, and this clerk's per content. */
  ledger(): string {
    return JSON.stringify([this.counted.size, [...this.own.values()].map((o) => o.uploadCount)]);
  }

  #answer<T>(kind: 'batch' | 'proofs', results: T): Promise<T> {
    const trouble = this.trouble[kind];
    if (trouble === 'lost') return new Promise<T>(() => undefined);
    if (trouble === 'network') return Promise.reject(new NetworkError());
    return Promise.resolve(results);
  }
}

function folder(count: number, size = 1024): Array<{ file: File; path: string; data: Uint8Array }> {
  return Array.from({ length: count }, (_, i) => {
    const data = randomBytes(size);
    return {
      data,
      path: `卷/第${String(i).padStart(3, '0')}页.jpg`,
      file: new File([data], `${i}.jpg`, { lastModified: 1000 }),
    };
  });
}

function pipeline(
  archive: FakeArchive,
  journal = new MemoryJournal(),
  maxFileSize = 1 << 30,
  saveReceipt?: (id: string, receipt: ReceiptRequest) => Promise<unknown>,
) {
  return new FolderUpload({
    api: archive,
    hasher,
    journal,
    maxFileSize,
    retryDelaysMs: [],
    ...(saveReceipt ? { saveReceipt } : {}),
    sendLarge: () => Promise.reject(new Error('no large files in these tests')),
    onChange: () => {},
  });
}

/**
 * Lets the pipeline run until `reached` holds (what the test waits on has happened). The deadline
 * is a safety net, generous: a machine running other work can be many times slower.
 */
async function until(reached: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 60_000; !reached(); await new Promise((r) => setTimeout(r, 10)))
    assert.ok(Date.now() < end, `never reached: ${what}`);
}

/** Until every file has ended and nothing runs. */
const settled = (upload: FolderUpload) =>
  until(() => !upload.active && upload.items.every((item) => item.outcome), 'every file ended');

describe('a folder upload in the browser', () => {
  it('checks and sends small files many to a request, finishes held ones instantly, and twins once', async () => {
    const archive = new FakeArchive();
    const files = folder(300);
    for (const f of files.slice(0, 30)) archive.hold(f.data);
    const twin = { ...files[40]!, path: '副本/twin.jpg', file: new File([files[40]!.data], 'twin.jpg') };
    const upload = pipeline(archive);
    // The archive answers once every file has come as far as it can meanwhile, as a busy archive
    // would: then the requests hold what the page gathered, however slowly it hashes (under load,
    // answered at once, files hashed late went in requests of their own).
    const gathered = new Set(['checking', 'twin', 'proving', 'sending', 'done']);
    archive.gate = () => until(() => upload.items.every((i) => gathered.has(i.phase)), 'every file gathered');
    await upload.add([...files, twin]);
    await settled(upload);
    const kinds = upload.items.map((i) => i.outcome?.kind);
    assert.equal(kinds.filter((k) => k === 'instant').length, 31, 'the 30 held and the twin');
    assert.equal(kinds.filter((k) => k === 'stored').length, 270);
    assert.ok(archive.calls.batch.length <= 2, `${archive.calls.batch.length} batch requests`);
    assert.equal(archive.calls.batch.flat().length, 270, 'each new content sent once');
    assert.ok(!archive.calls.batch.flat().includes('副本/twin.jpg'), 'the twin is not sent');
    assert.ok(archive.calls.checks.length <= 3, `${archive.calls.checks.length} check requests`);
  });

  it('refuses a file over the limit before reading it, and offers no retry', async () => {
    const archive = new FakeArchive();
    const [big] = folder(1, 5000);
    const upload = pipeline(archive, new MemoryJournal(), 4096);
    const before = hasher.hashed;
    await upload.add([big!]);
    await settled(upload);
    assert.equal(hasher.hashed, before, 'never hashed');
    assert.deepEqual(upload.items[0]!.outcome, {
      kind: 'failed',
      code: 'payload_too_large',
      message: '4096',
      retry: false,
    });
  });

  it('after a reload, sends a batch that went unanswered again under the same keys, without checking, counted once', async () => {
    const archive = new FakeArchive();
    const journal = new MemoryJournal();
    const files = folder(50);
    archive.trouble.batch = 'lost';
    const first = pipeline(archive, journal);
    await first.add(files);
    await until(() => archive.counted.size === 50, 'the archive counted the batch; its answer never came');
    const keys = first.items.map((i) => i.key);

    // The page is reloaded: a new pipeline over the same journal, and the same folder dropped again.
    archive.trouble = {};
    const checksBefore = archive.calls.checks.flat().length;
    const second = pipeline(archive, journal);
    await second.restore();
    assert.equal(second.items.filter((i) => !i.outcome).length, 50, 'fifty files not finished');
    await second.add(files);
    await settled(second);
    assert.deepEqual(
      second.items.map((i) => i.key),
      keys,
    );
    assert.equal(archive.calls.checks.flat().length, checksBefore, 'not checked again: sent again');
    assert.equal(archive.counted.size, 50, 'nothing counted twice');
    assert.ok(second.items.every((i) => i.outcome?.kind === 'duplicate' || i.outcome?.kind === 'stored'));
  });

  it('remembers every file of the folder at once, so a reload knows how many were not finished', async () => {
    const archive = new FakeArchive();
    const journal = new MemoryJournal();
    archive.trouble.batch = 'lost';
    const first = pipeline(archive, journal);
    await first.add(folder(20));
    // Reloaded at once: nothing was sent yet.
    const second = pipeline(archive, journal);
    await second.restore();
    assert.equal(second.items.length, 20);
    assert.ok(second.items.every((i) => !i.outcome && !i.file));
  });

  it('after a reload, sends an unanswered proof again with its claim', async () => {
    const archive = new FakeArchive();
    const journal = new MemoryJournal();
    const [held] = folder(1);
    archive.hold(held!.data);
    archive.trouble.proofs = 'lost';
    const first = pipeline(archive, journal);
    await first.add([held!]);
    await until(() => archive.calls.proofs.length === 1, 'the proof was sent; its answer never came');
    archive.trouble = {};
    const second = pipeline(archive, journal);
    await second.restore();
    await second.add([held!]);
    await settled(second);
    assert.equal(archive.calls.proofs.length, 2);
    assert.deepEqual(archive.calls.proofs[1], archive.calls.proofs[0], 'the same claim');
    assert.equal(second.items[0]!.outcome?.kind, 'instant');
  });

  it('a file that failed on the way keeps its key: retried, it goes under the same key', async () => {
    const archive = new FakeArchive();
    const [page] = folder(1);
    archive.trouble.batch = 'network';
    const upload = pipeline(archive);
    await upload.add([page!]);
    await settled(upload);
    assert.equal(upload.items[0]!.outcome?.kind, 'failed');
    assert.equal(archive.counted.size, 1, 'counted, though the answer was lost');
    archive.trouble = {};
    upload.retryFailed();
    await settled(upload);
    assert.equal(upload.items[0]!.outcome?.kind, 'duplicate');
    assert.equal(archive.counted.size, 1, 'still once');
    assert.equal(archive.calls.checks.length, 1, 'not checked again (a check would prove and count it again)');
  });

  it('sends the receipt once the upload comes to rest, and after a reload only if it was not kept (else shows it kept)', async () => {
    const archive = new FakeArchive();
    const journal = new MemoryJournal();
    const kept: Array<{ id: string; receipt: ReceiptRequest }> = [];
    const keep = async (id: string, receipt: ReceiptRequest) => void kept.push({ id, receipt });
    const first = pipeline(archive, journal, 1 << 30, keep);
    const files = folder(3);
    await first.add(files);
    await settled(first);
    await new Promise((r) => setTimeout(r, 400));
    await first.flush();
    assert.equal(kept.length, 1);
    assert.deepEqual(
      kept[0]!.receipt.rows.map((r) => [r.path, r.outcome, r.via, r.key !== undefined]),
      files.map((f) => [f.path, 'stored', 'batch', true]),
    );
    // Reloaded after it was kept: nothing to send again.
    const second = pipeline(archive, journal, 1 << 30, keep);
    await second.restore();
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(kept.length, 1, 'a receipt kept is not sent again on every reload');
    assert.deepEqual(
      second.receipt,
      { kind: 'saved', id: kept[0]!.id },
      'the receipt kept is offered again (its link, and 撤回 of its files)',
    );
    // Closed before the receipt was kept (the journal says it was not): sent again, replacing it.
    await journal.saveAction({ ...(await journal.loadAction())!, kept: undefined });
    const third = pipeline(archive, journal, 1 << 30, keep);
    await third.restore();
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(kept.length, 2);
    assert.equal(kept[1]!.id, kept[0]!.id, 'the same receipt, replaced');
    assert.deepEqual(kept[1]!.receipt, kept[0]!.receipt);
  });

  it('a folder dropped as soon as the last one finished does not cost the last one its receipt', async () => {
    // The page clears an ended list when the next folder comes (use-folder-upload.ts): the ended
    // list's receipt, still waiting to be sent, is sent then. Without it the archive never learns
    // that the first drop's copies of a page came in one upload, and counts them as re-sends.
    const archive = new FakeArchive();
    const kept: Array<{ id: string; receipt: ReceiptRequest }> = [];
    const upload = pipeline(
      archive,
      new MemoryJournal(),
      1 << 30,
      async (id, receipt) => void kept.push({ id, receipt }),
    );
    const [page, other] = folder(2);
    const copy = { path: '卷/第101页.jpg', file: new File([page!.data], '第101页.jpg', { lastModified: 1000 }) };
    await upload.add([page!, copy, other!]);
    await settled(upload);
    await upload.clear();
    const later = folder(1);
    await upload.add(later);
    await settled(upload);
    await until(() => kept.length === 2, 'both receipts kept');
    const byRows = new Map(kept.map((k) => [k.receipt.rows.length, k]));
    assert.notEqual(kept[0]!.id, kept[1]!.id, 'two uploads, two receipts');
    assert.deepEqual(
      byRows.get(3)!.receipt.rows.map((r) => [r.path, r.outcome, r.claimId !== undefined || r.key !== undefined]),
      [
        [page!.path, 'stored', true],
        [other!.path, 'stored', true],
        [copy.path, 'instant', true],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      'the first drop’s receipt names every upload it counted, the copy’s claim too',
    );
    assert.deepEqual(
      byRows.get(1)!.receipt.rows.map((r) => r.path),
      later.map((f) => f.path),
    );
  });

  it('a receipt that could not be kept before its list was cleared is sent again with the next list’s', async () => {
    const archive = new FakeArchive();
    const sent: string[] = [];
    let refuse = true;
    const upload = pipeline(archive, new MemoryJournal(), 1 << 30, async (id) => {
      sent.push(id);
      if (refuse) throw new NetworkError();
    });
    await upload.add(folder(2));
    await settled(upload);
    await upload.clear();
    await until(() => sent.length === 1, 'the first receipt sent as its list is cleared');
    // Refused on its way (no network): the list is gone, the receipt is owed.
    refuse = false;
    await upload.add(folder(1));
    await settled(upload);
    await until(() => sent.length === 3, 'the next receipt, and the one owed');
    assert.equal(new Set(sent).size, 2, 'the owed receipt under its own id, once more');
    assert.equal(sent.filter((id) => id === sent[0]).length, 2);
    await until(() => upload.receipt.kind === 'saved', 'the list’s own receipt shown kept');
  });

  it('files dropped while the page still reads what it remembers are uploaded under a receipt all the same', async () => {
    // A slow journal (IndexedDB on a busy machine): it has read that nothing is remembered, and
    // answers so only after the clerk has dropped the files.
    class SlowJournal extends MemoryJournal {
      override async loadAction() {
        const remembered = await super.loadAction();
        await new Promise((r) => setTimeout(r, 50));
        return remembered;
      }
    }
    const archive = new FakeArchive();
    const kept: string[] = [];
    const upload = pipeline(archive, new SlowJournal(), 1 << 30, async (id) => void kept.push(id));
    const restoring = upload.restore();
    const adding = upload.add(folder(2));
    await Promise.all([restoring, adding]);
    await settled(upload);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(upload.items.length, 2);
    assert.equal(kept.length, 1, 'the receipt was kept');
  });

  it('finished files are not sent again when the same folder is dropped; a changed file is a new upload', async () => {
    const archive = new FakeArchive();
    const journal = new MemoryJournal();
    const files = folder(3);
    const first = pipeline(archive, journal);
    await first.add(files);
    await settled(first);
    await first.flush();
    const second = pipeline(archive, journal);
    await second.restore();
    const changed = { ...files[2]!, file: new File([randomBytes(1024)], 'x.jpg', { lastModified: 2000 }) };
    const oldKey = second.items[2]!.key;
    await second.add([files[0]!, files[1]!, changed]);
    await settled(second);
    assert.equal(archive.calls.batch.flat().length, 4, 'only the changed file went again');
    assert.notEqual(second.items[2]!.key, oldKey);
    assert.equal(second.items[2]!.outcome?.kind, 'stored');
  });

  it('a large file paused while its journal entry is written does not start sending until resumed', async () => {
    // The journal (IndexedDB) takes its time writing that the file is being sent; the clerk
    // pauses meanwhile.
    let written!: () => void;
    const writing = new Promise<void>((resolve) => (written = resolve));
    let sendingSaved = false;
    class SlowJournal extends MemoryJournal {
      override async save(entries: Parameters<MemoryJournal['save']>[0]) {
        if (entries.some((e) => e.state === 'sending')) {
          sendingSaved = true;
          await writing;
        }
        return super.save(entries);
      }
    }
    const sends: Array<{ whilePaused: boolean; aborted: boolean }> = [];
    const upload = new FolderUpload({
      api: new FakeArchive(),
      hasher,
      journal: new SlowJournal(),
      maxFileSize: 1 << 30,
      retryDelaysMs: [],
      // As tus-js-client's sender does: a stopped signal rejects at once, and nothing is sent.
      sendLarge: (item, _progress, signal) => {
        sends.push({ whilePaused: upload.paused, aborted: signal.aborted });
        if (signal.aborted) return Promise.reject(signal.reason as Error);
        return Promise.resolve({ status: 'stored', fileId: item.md5.slice(0, 24), uploadCount: 1 });
      },
      onChange: () => {},
    });
    const [large] = folder(1, SMALL_FILE_MAX_BYTES + 1);
    await upload.add([large!]);
    await until(() => sendingSaved, 'the file is being written down as sent');
    upload.pause();
    written();
    await until(
      () => sends.length > 0 || upload.items[0]!.outcome !== undefined,
      'the sender was asked, or the file ended',
    );
    assert.deepEqual(
      sends.filter((s) => s.whilePaused && !s.aborted),
      [],
      'no upload started while paused',
    );
    assert.equal(upload.items.filter((i) => i.outcome).length, 0, 'held, not finished');
    upload.resume();
    await settled(upload);
    assert.equal(upload.items[0]!.outcome?.kind, 'stored');
    assert.deepEqual(sends.at(-1), { whilePaused: false, aborted: false }, 'sent once resumed');
  });

  it('while the archive does not answer, shows the wait (files marked, next try’s time); 立即重试 sends at once and the answer ends it', async () => {
    class DownArchive extends FakeArchive {
      down = true;
      tries = 0;
      override async batch(files: Parameters<UploadApi['batch']>[0]): Promise<BatchFileResult[]> {
        this.tries++;
        if (this.down) throw new NetworkError();
        return super.batch(files);
      }
    }
    const archive = new DownArchive();
    let changes = 0;
    const upload = new FolderUpload({
      api: archive,
      hasher,
      journal: new MemoryJournal(),
      maxFileSize: 1 << 30,
      // One try, longer than the test’s own deadline: only 立即重试 can end the wait in time, and
      // being woken must not use the try up.
      retryDelaysMs: [600_000],
      sendLarge: () => Promise.reject(new Error('no large files here')),
      onChange: () => changes++,
    });
    const files = folder(5);
    assert.equal(upload.waits.state, undefined, 'nothing waits before anything failed');
    await upload.add(files);
    await until(() => upload.waits.state?.retryAt !== undefined, 'the failed batch waits for its next try');
    const { cause, retryAt } = upload.waits.state!;
    assert.equal(cause, 'offline');
    assert.ok(retryAt! - Date.now() > 590_000, 'its next try is the first delay away');
    assert.deepEqual(
      upload.items.map((i) => i.retrying),
      [true, true, true, true, true],
      'its files are marked 等待重试',
    );
    const seen = changes;
    // Still down: woken, it fails again and waits again, without using up a try.
    upload.waits.retryNow();
    await until(() => archive.tries === 2 && upload.waits.state?.retryAt !== undefined, 'tried at once, waits again');
    assert.ok(changes > seen, 'the page heard of it');
    archive.down = false;
    upload.waits.retryNow();
    await settled(upload);
    assert.equal(archive.tries, 3);
    assert.equal(upload.waits.state, undefined, 'nothing waits once answered');
    assert.deepEqual(
      upload.items.map((i) => [i.retrying, i.outcome?.kind]),
      files.map(() => [false, 'stored']),
    );
    assert.equal(archive.counted.size, 5, 'each file counted once');
  });

  it('an answer from the archive wakes the requests that got none; one the archive asked to wait (429) keeps waiting', async () => {
    const upload = new FolderUpload({
      api: new FakeArchive(),
      hasher,
      journal: new MemoryJournal(),
      maxFileSize: 1 << 30,
      sendLarge: () => Promise.reject(new Error('no large files here')),
      onChange: () => {},
    });
    const offline = upload.waits.begin([]);
    const busy = upload.waits.begin([]);
    const offlineSlept = offline.sleep(600_000, 'offline');
    const busySlept = busy.sleep(600_000, 'busy');
    assert.equal(upload.waits.state?.cause, 'offline');
    upload.waits.answered();
    assert.equal(await offlineSlept, 'answer', 'woken');
    offline.end();
    assert.deepEqual(upload.waits.state?.cause, 'busy', 'the busy one still waits');
    upload.waits.retryNow();
    assert.equal(await busySlept, 'clerk', 'woken by 立即重试');
    busy.end();
    assert.equal(upload.waits.state, undefined);
  });

  it('says of identical files in one list which file each equals: the first of that content counted, for every copy', async () => {
    const archive = new FakeArchive();
    const [page, other] = folder(2);
    const copies = ['卷/第101页.jpg', '卷/第102页.jpg'].map((path) => ({
      path,
      file: new File([page!.data], path, { lastModified: 1000 }),
    }));
    const upload = pipeline(archive);
    await upload.add([page!, ...copies, other!]);
    await settled(upload);
    const byPath = new Map(upload.items.map((i) => [i.path, i]));
    const group = [page!.path, ...copies.map((c) => c.path)].map((p) => byPath.get(p)!);
    const firsts = group.filter((i) => i.sameAs === undefined);
    assert.equal(firsts.length, 1, 'one of the three went first');
    assert.equal(firsts[0]!.outcome?.kind, 'stored');
    for (const copy of group.filter((i) => i !== firsts[0])) {
      assert.equal(copy.sameAs, firsts[0]!.path, `${copy.path} names the first, not the copy before it`);
      assert.equal(copy.outcome?.kind, 'instant', 'counted (a proof), not sent');
    }
    assert.equal(byPath.get(other!.path)!.sameAs, undefined);
    assert.equal(archive.counted.size, 4, 'every file is still counted: the ledger is not this page’s to change');
  });
});

/** A folder this clerk uploaded, finished, and then cleared from the list (the page starts a new one). */
async function uploadedBefore(archive: FakeArchive, count: number) {
  const files = folder(count, 64);
  const first = pipeline(archive);
  await first.add(files);
  await settled(first);
  return files;
}

/** Until the upload asks its question; then the question. */
async function asked(upload: FolderUpload) {
  await until(() => upload.question !== undefined, 'the question is asked');
  return upload.question!;
}

describe('a folder dropped again: asked once, skipped by default', () => {
  it('asks once, after every file of the drop was checked, with their count and the latest earlier upload; skipping counts nothing', async () => {
    const archive = new FakeArchive();
    const files = await uploadedBefore(archive, 50);
    const latest = [...archive.own.values()].map((o) => o.lastUploadTime).sort()[49]!;
    const before = archive.ledger();
    const kept: ReceiptRequest[] = [];
    const upload = pipeline(archive, new MemoryJournal(), 1 << 30, async (_id, r) => void kept.push(r));
    const fresh = folder(5, 64).map((f) => ({ ...f, path: f.path.replace('卷', '新卷') }));
    await upload.add([...files, ...fresh]);
    const question = await asked(upload);
    assert.deepEqual([question.count, question.latest], [50, latest]);
    assert.equal(archive.calls.checks.flat().length, 105, 'every file of the drop was checked before it was asked');
    assert.ok(
      upload.items.filter((i) => files.some((f) => f.path === i.path)).every((i) => i.phase === 'asking'),
      'the files sent before wait for the answer',
    );
    assert.equal(archive.calls.proofs.flat().length, 0, 'none of them proved');
    question.answer('skip');
    await settled(upload);
    assert.equal(upload.question, undefined);
    assert.equal(upload.items.filter((i) => i.outcome?.kind === 'skipped').length, 50);
    assert.equal(upload.items.filter((i) => i.outcome?.kind === 'stored').length, 5, 'the new files went as usual');
    assert.equal(archive.calls.proofs.flat().length, 0, 'no proof for a skipped file');
    assert.equal(
      JSON.parse(archive.ledger())[0],
      JSON.parse(before)[0] + 5,
      'the ledger counted the five new files only',
    );
    await until(() => kept.length > 0, 'the receipt is sent');
    const rows = kept[kept.length - 1]!.rows;
    assert.equal(rows.filter((r) => r.outcome === 'skipped' && r.reason === 'already_uploaded').length, 50);
    assert.equal(rows.filter((r) => r.outcome === 'stored').length, 5);
  });

  it('counts them again when the clerk says 仍要再次登记', async () => {
    const archive = new FakeArchive();
    const files = await uploadedBefore(archive, 20);
    const upload = pipeline(archive);
    await upload.add(files);
    (await asked(upload)).answer('count');
    await settled(upload);
    assert.equal(upload.items.filter((i) => i.outcome?.kind === 'instant').length, 20);
    assert.equal(
      archive.calls.checks.flat().length,
      60,
      'checked again after the answer: a claim may have expired while the clerk read the question',
    );
    assert.ok(
      [...archive.own.values()].every((o) => o.uploadCount === 2),
      'each counted a second time',
    );
  });

  it('asks about a drop larger than the files under way at once as a whole (the waiting ones give way)', async () => {
    const archive = new FakeArchive();
    const files = await uploadedBefore(archive, 2100);
    const upload = pipeline(archive);
    await upload.add(files);
    const question = await asked(upload);
    assert.equal(question.count, 2100);
    question.answer('skip');
    await settled(upload);
    assert.equal(upload.items.filter((i) => i.outcome?.kind === 'skipped').length, 2100);
  });

  it('copies within the upload are not asked about; copies of a file sent before are, with it', async () => {
    const archive = new FakeArchive();
    const [sent] = await uploadedBefore(archive, 1);
    const upload = pipeline(archive);
    const [fresh] = folder(1, 64);
    const copyOf = (f: { data: Uint8Array }, path: string) => ({
      data: f.data,
      path,
      file: new File([f.data], 'c.jpg'),
    });
    await upload.add([
      { ...fresh!, path: '新/a.jpg' },
      copyOf(fresh!, '新/副本/a.jpg'),
      sent!,
      copyOf(sent!, '卷/副本/第000页.jpg'),
    ]);
    const question = await asked(upload);
    assert.equal(question.count, 2, 'the file sent before and its copy; not the new file’s twin');
    question.answer('skip');
    await settled(upload);
    assert.deepEqual(
      upload.items.map((i) => [i.path, i.outcome?.kind]),
      [
        ['新/a.jpg', 'stored'],
        ['新/副本/a.jpg', 'instant'],
        ['卷/第000页.jpg', 'skipped'],
        ['卷/副本/第000页.jpg', 'skipped'],
      ],
    );
  });

  it('the same folder dropped again while the first drop waits for the answer adds nothing and asks nothing more', async () => {
    const archive = new FakeArchive();
    const files = await uploadedBefore(archive, 10);
    const upload = pipeline(archive);
    await upload.add(files);
    const question = await asked(upload);
    await upload.add(files);
    assert.equal(upload.items.length, 10);
    assert.equal(upload.question, question);
    assert.equal(question.count, 10);
    question.answer('skip');
    await settled(upload);
    assert.equal(
      archive.calls.checks.flat().length,
      20,
      'ten checks the first time, ten now, none for the second drop',
    );
  });
});
