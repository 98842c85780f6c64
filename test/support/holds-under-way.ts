import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { HoldView } from '../../shared/holds.js';
import type { WithdrawalAnswer } from '../../shared/withdrawals.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { Catalog } from '../../server/store/catalog/port.js';
import type { ContentStore } from '../../server/store/content/port.js';
import type { DisposalStore } from '../../server/store/disposals/port.js';
import type { HoldStore } from '../../server/store/holds/port.js';
import type { Ledger } from '../../server/store/ledger/port.js';
import type { WithdrawalStore } from '../../server/store/withdrawals/port.js';
import { randomContent } from './content.js';
import { PausePoint } from './pause-point.js';
import { uploadFolder } from './receipts.js';
import { body, type Client, TestServer } from './server.js';
import type { StoreTarget } from './stores.js';

/**
 * What the tests of 冻结 against a withdrawal, purge, content deletion or disposal under way
 * share: a server whose store pauses each of them where a hold can come between (after its look
 * at the holds, after it was cleared), and the steps of such a test: an upload, one in the trash,
 * one a crash left before its look at the holds, a hold placed while another request is paused.
 */

/** In the town of the clerk, under the county of its administrator. */
export const TOWN_Q = '130922100';

/** The points a request can be paused at, each passed by the wrapped store's step. */
export class PausePoints {
  /** A withdrawal (or purge) has read the holds: the holds' store answered its question. */
  readonly afterHoldCheck = new PausePoint();
  /** A withdrawal's reversal is about to be made in the ledger. */
  readonly beforeWithdrawalReversal = new PausePoint();
  /** A purge has looked at the holds, and is about to be cleared. */
  readonly beforePurgeCleared = new PausePoint();
  /** A cleared purge is about to have the ledger purge its upload. */
  readonly beforeLedgerPurge = new PausePoint();
  /** A content's deletion has looked at its holders and holds, and is about to be cleared. */
  readonly beforeDeletionCleared = new PausePoint();
  /** A cleared deletion is about to remove the bytes. */
  readonly beforeBytesRemoved = new PausePoint();
  /** A disposal has looked at the holds, and is about to be cleared. */
  readonly beforeDisposalCleared = new PausePoint();
  /** A cleared disposal is about to reverse the file's uploads. */
  readonly beforeDisposalReversal = new PausePoint();

  /** Run after each upload a disposal reverses: a test's clerk counting the file again, say. */
  afterDisposalReversal: (() => Promise<void>) | undefined;

  /** None armed any more (a test that failed before its request got there leaves the next alone). */
  disarm(): void {
    for (const point of Object.values(this)) if (point instanceof PausePoint) point.disarm();
    this.afterDisposalReversal = undefined;
  }

  /** The store, each of these steps passing its point first (or, `afterHoldCheck`, after). */
  readonly wrap = (store: ArchiveStore): ArchiveStore => {
    const holds: HoldStore = Object.create(store.holds) as HoldStore;
    holds.covering = async (fileIds, unitIds) => {
      const found = await store.holds.covering(fileIds, unitIds);
      await this.afterHoldCheck.pass();
      return found;
    };
    const withdrawals: WithdrawalStore = Object.create(store.withdrawals) as WithdrawalStore;
    withdrawals.clearPurge = async (id) => {
      await this.beforePurgeCleared.pass();
      return store.withdrawals.clearPurge(id);
    };
    const ledger: Ledger = Object.create(store.ledger) as Ledger;
    ledger.reverseMany = async (changes) => {
      await this.beforeWithdrawalReversal.pass();
      return store.ledger.reverseMany(changes);
    };
    ledger.purge = async (uploadKey, changeKey) => {
      await this.beforeLedgerPurge.pass();
      return store.ledger.purge(uploadKey, changeKey);
    };
    ledger.reverse = async (actionKey, changeKey) => {
      const disposal = changeKey.startsWith('disposal:');
      if (disposal) await this.beforeDisposalReversal.pass();
      const reversal = await store.ledger.reverse(actionKey, changeKey);
      if (disposal && reversal === 'reversed') await this.afterDisposalReversal?.();
      return reversal;
    };
    const catalog: Catalog = Object.create(store.catalog) as Catalog;
    catalog.clearDeletion = async (fileId) => {
      await this.beforeDeletionCleared.pass();
      return store.catalog.clearDeletion(fileId);
    };
    const content: ContentStore = Object.create(store.content) as ContentStore;
    content.remove = async (entry) => {
      await this.beforeBytesRemoved.pass();
      return store.content.remove(entry);
    };
    const disposals: DisposalStore = Object.create(store.disposals) as DisposalStore;
    disposals.clear = async (id) => {
      await this.beforeDisposalCleared.pass();
      return store.disposals.clear(id);
    };
    return { ...store, holds, withdrawals, ledger, catalog, content, disposals };
  };
}

/**
 * A server of the division data of Hebei (13) whose store pauses at `points`, with a clerk of
 * TOWN_Q (`clerkQ`), its county's administrator (`adminQ`) and a top-level one (`top`), on a clock
 * that stands still but for `sweepLater`.
 */
export class HoldsUnderWay {
  /** Holds placed by a test, lifted after it whatever happened (`reset`). */
  private readonly placed: string[] = [];

  private constructor(
    readonly server: TestServer,
    readonly as: Record<'clerkQ' | 'adminQ' | 'top', Client>,
    readonly points: PausePoints,
    private readonly clock: { now: Date },
  ) {}

  static async start(target: StoreTarget): Promise<HoldsUnderWay> {
    const points = new PausePoints();
    const clock = { now: new Date() };
    const server = await TestServer.start(target, { clock: () => clock.now, wrapStore: points.wrap });
    await server.archive.services.directory.load(['13']);
    await server.addAccountIn('clerkQ', 'clerk', TOWN_Q);
    await server.addAccountIn('adminQ', 'admin', '130922');
    await server.addAccountIn('top', 'admin', 'archive');
    return new HoldsUnderWay(server, await server.loginAll(['clerkQ', 'adminQ', 'top']), points, clock);
  }

  /** The server's time. */
  get now(): Date {
    return this.clock.now;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  /** After a test: no point armed, its holds lifted. */
  async reset(): Promise<void> {
    this.points.disarm();
    for (const id of this.placed.splice(0)) await this.lift(id);
  }

  /** A hold placed by the county's administrator (201), lifted after the test if it does not. */
  async place(request: object): Promise<HoldView> {
    const hold = await body<HoldView>(
      await this.as.adminQ.json('/api/holds', 'POST', { reason: '审计调查', ...request }),
      201,
    );
    this.placed.push(hold.id);
    return hold;
  }

  async lift(id: string): Promise<HoldView> {
    return body<HoldView>(await this.as.adminQ.fetch(`/api/holds/${id}/lift`, { method: 'POST' }), 200);
  }

  /**
   * Starts `operation`, pauses it at `point`, places the hold `request` meanwhile and runs
   * `whenAnswered` once the hold has answered, then lets the operation go on: the hold and the
   * operation's answer.
   */
  async holdMeanwhile(
    point: PausePoint,
    operation: () => Promise<Response>,
    request: object,
    whenAnswered: (hold: HoldView) => Promise<void>,
  ): Promise<{ hold: HoldView; answer: Response }> {
    const paused = point.arm();
    const answering = operation();
    await paused.reached;
    let hold: HoldView;
    try {
      hold = await this.place(request);
      await whenAnswered(hold);
    } finally {
      paused.release();
    }
    return { hold, answer: await answering };
  }

  /** One file uploaded by the clerk: its upload's id and the file's. */
  async uploadOne(): Promise<{ uploadId: string; fileId: string }> {
    const { uploadIds, fileIds } = await uploadFolder(this.as.clerkQ, [randomContent(3000)], '卷', this.now);
    return { uploadId: uploadIds[0]!, fileId: fileIds[0]! };
  }

  withdraw(uploadId: string): Promise<Response> {
    return this.as.clerkQ.json('/api/withdrawals', 'POST', { reason: 'wrong_file', uploads: [uploadId] });
  }

  /** An upload withdrawn: in the trash, its withdrawal's id. */
  async inTrash(): Promise<{ uploadId: string; fileId: string; withdrawalId: string }> {
    const upload = await this.uploadOne();
    const answer = await body<WithdrawalAnswer>(await this.withdraw(upload.uploadId), 200);
    return { ...upload, withdrawalId: answer.withdrawn[0]!.id };
  }

  /** A withdrawal of the upload recorded, then the process died before it asked about holds. */
  async crashedWithdrawal(uploadId: string, fileId: string): Promise<string> {
    const { store } = this.server;
    const clerk = (await store.accounts.findByUsername('clerkQ'))!;
    const by = { id: clerk.id, username: 'clerkQ' };
    const id = randomBytes(16).toString('hex');
    const now = this.now;
    await store.withdrawals.open({
      id,
      uploadKey: uploadId,
      upload: { account: by, unit: clerk.unit, fileId, fileName: '卷/第1页.pdf', fileLength: 3000, at: now },
      withdrawnBy: by,
      withdrawnAt: now,
      reason: 'wrong_file',
      note: null,
      state: 'withdrawing',
      cleared: false,
      changedAt: now,
      restoredBy: null,
      restoredAt: null,
      purgedBy: null,
      purgedAt: null,
    });
    return id;
  }

  /** A purge of a withdrawal in the trash recorded (`purging`), then the process died before it looked at the holds. */
  async crashedPurge({ withdrawalId }: { withdrawalId: string }): Promise<void> {
    const top = (await this.server.store.accounts.findByUsername('top'))!;
    const by = { id: top.id, username: 'top' };
    assert.ok(await this.server.store.withdrawals.advance(withdrawalId, 'withdrawn', 'purging', this.now, by));
  }

  /** A disposal's entry recorded, then the process died before it looked at the holds. */
  async crashedDisposal({ fileId }: { fileId: string }): Promise<void> {
    const { store } = this.server;
    const top = (await store.accounts.findByUsername('top'))!;
    const entry = (await store.catalog.get(fileId))!;
    await store.disposals.open({
      id: randomBytes(16).toString('hex'),
      fileId,
      fileName: entry.fileName,
      fileLength: entry.length,
      storedAt: entry.uploadDate,
      units: [],
      uploaders: [],
      firstUploadAt: null,
      lastUploadAt: null,
      countedUploads: 1,
      withdrawnUploads: 0,
      reason: '保管期满',
      approvalRef: '沧档销〔2026〕7号',
      disposedBy: { id: top.id, username: 'top' },
      disposedAt: this.now,
      state: 'disposing',
      cleared: false,
      changedAt: this.now,
    });
  }

  /** The garbage collector's sweep run two minutes on, where it finishes what was interrupted a minute before. */
  async sweepLater(): Promise<void> {
    const started = this.clock.now;
    this.clock.now = new Date(started.getTime() + 2 * 60_000);
    try {
      await this.server.archive.gc.run();
    } finally {
      this.clock.now = started;
    }
  }
}
