import assert from 'node:assert/strict';

/**
 * The model of `crash-during-withdrawals.test.ts`: what the archive must hold after a run, kept
 * from the answers its operations got (EFFECTS), and, for the requests given up after a lost
 * answer, from what the trash and the disposal register say after the sweep (settleGivenUp).
 */

export interface Content {
  data: Buffer;
  worker: number;
}

/** An upload as the model knows it: counted (not withdrawn) or withdrawn, once the archive answered. */
export interface ModelUpload {
  id: string;
  /** Order of counting within its file (one worker per file: sequence is time). */
  seq: number;
  clerk: number;
  content: number;
  /** The file it was counted into (a content deleted and uploaded again is a new file). */
  fileId: string;
  /** Whether it was counted as storing the bytes (it carried them and no upload of the file counted). */
  stored: boolean;
  counted: boolean;
  /** Its open withdrawal. */
  withdrawal?: string;
  /** A withdrawal, restore, purge or disposal of it was given up after a kill: what happened is read back after the sweep. */
  uncertain?: 'withdrawal' | 'purge' | 'disposal';
  /** Out of the archive for good: its withdrawal purged from the trash, or its file disposed of. */
  gone?: 'purged' | 'disposed';
  day: string;
}

export interface ModelWithdrawal {
  id: string;
  uploadId: string;
  by: string;
  open: boolean;
  /** The request that made it (or restored it) lost an answer: its audit event may be lost, never doubled. */
  mayLoseWithdrawnEvent: boolean;
  restores: number;
  mayLoseRestoredEvents: number;
  /** Purged from the trash (it stays the upload's withdrawal, never restorable). */
  purged: boolean;
  mayLosePurgedEvent: boolean;
}

export class Model {
  readonly uploads = new Map<string, ModelUpload>();
  readonly withdrawals = new Map<string, ModelWithdrawal>();
  readonly receipts = new Map<string, { clerk: number; uploadIds: string[] }>();
  readonly fileIds = new Map<number, string>();
  /** Per content, the upload that holds its bytes (not saved), as the ledger keeps it (counts.md). */
  readonly holders = new Map<number, string | undefined>();
  /** Files deleted (their content purged or disposed of), by file id: their content's index. */
  readonly goneFiles = new Map<string, number>();
  /** Files disposed of, by file id: whether the request that did it lost an answer (its audit event may be lost). */
  readonly disposals = new Map<string, { lostAnswer: boolean }>();
  private seq = 0;
  nextSeq(): number {
    return this.seq++;
  }
  counted(): ModelUpload[] {
    return [...this.uploads.values()].filter((u) => u.counted);
  }
  /** Uploads an operation may pick: the worker's own contents, and none whose state is unknown. */
  certain(worker: number, contents: Content[]): ModelUpload[] {
    return [...this.uploads.values()].filter((u) => !u.uncertain && !u.gone && contents[u.content]!.worker === worker);
  }
  /**
   * Contents an upload may be of: the worker's own, none with an upload whose state is unknown
   * (whether a count finds the file's uploads all withdrawn decides its holder).
   */
  uploadable(worker: number, contents: Content[]): number[] {
    return contents.flatMap((c, i) =>
      c.worker === worker && ![...this.uploads.values()].some((u) => u.uncertain && u.content === i) ? [i] : [],
    );
  }
  /**
   * Who holds a content's bytes by the rule, after a change of its uploads: the earliest counted
   * of those that stored them, else the earliest counted.
   */
  settleHolder(content: number): void {
    const counted = this.counted()
      .filter((u) => u.content === content)
      .sort((a, b) => a.seq - b.seq);
    this.holders.set(content, (counted.find((u) => u.stored) ?? counted[0])?.id);
  }
  /**
   * After a purge of some of its uploads: the content is deleted, bytes and all, when none of its
   * file's uploads counts or waits in the trash (no holds here; docs/decisions/purge.md).
   */
  deleteUnheld(content: number): void {
    const fileId = this.fileIds.get(content);
    if (fileId === undefined) return;
    const holds = (u: ModelUpload) =>
      u.fileId === fileId && (u.counted || (u.withdrawal !== undefined && this.withdrawals.get(u.withdrawal)!.open));
    if ([...this.uploads.values()].some(holds)) return;
    this.fileIds.delete(content);
    this.goneFiles.set(fileId, content);
  }
}

/** What an operation did, as its answers said. */
export type Effect =
  | {
      kind: 'counted';
      uploads: Array<{ id: string; clerk: number; content: number; fileId: string; status: string; carries: boolean }>;
      receipt?: string;
    }
  | { kind: 'withdrawn'; by: string; withdrawals: Array<{ id: string; uploadId: string }>; lostAnswer: boolean }
  | { kind: 'restored'; withdrawalId: string; lostAnswer: boolean }
  | { kind: 'purged'; withdrawalIds: string[]; lostAnswer: boolean }
  | { kind: 'disposed'; content: number; fileId: string; lostAnswer: boolean }
  | { kind: 'given up'; what: 'withdrawal' | 'purge' | 'disposal'; uploadIds: string[] };

const TIME_ZONE = 'Asia/Shanghai';
const today = (at = new Date()) => at.toLocaleDateString('sv-SE', { timeZone: TIME_ZONE });

/**
 * Each effect's change to the model: counted, withdrawn, restored, purged (the withdrawals leave
 * the trash for good, and a content none of whose uploads counts or waits in the trash leaves the
 * catalog, its bytes unreadable) and disposed (every upload of the file out of every count and the
 * trash, the content's bytes gone at once). A content uploaded again after its deletion is a new
 * file, stored anew.
 */
export const EFFECTS: { [K in Effect['kind']]: (model: Model, effect: Extract<Effect, { kind: K }>) => void } = {
  counted(model, { uploads, receipt }) {
    for (const u of uploads) {
      const known = model.fileIds.get(u.content);
      if (known) assert.equal(u.fileId, known, `content ${u.content} keeps its file id`);
      else model.fileIds.set(u.content, u.fileId);
      assert.ok(!model.uploads.has(u.id), `upload ${u.id} is counted once`);
      // An upload that carries the bytes stores them when none of the file's uploads counts (counts.md).
      const none = !model.counted().some((x) => x.content === u.content);
      const first = u.carries && none;
      assert.equal(u.status, first ? 'stored' : 'duplicate', `upload ${u.id} of content ${u.content}`);
      // Into a file none of whose uploads counts, a count holds the bytes if it carried them, or
      // if an upload of the file ever stored them (counts.md, "Who holds the bytes").
      const storedEver = [...model.uploads.values()].some((x) => x.content === u.content && x.stored);
      if (none) model.holders.set(u.content, first || storedEver ? u.id : undefined);
      model.uploads.set(u.id, {
        id: u.id,
        seq: model.nextSeq(),
        clerk: u.clerk,
        content: u.content,
        fileId: u.fileId,
        stored: first,
        counted: true,
        day: today(),
      });
    }
    if (receipt) model.receipts.set(receipt, { clerk: uploads[0]!.clerk, uploadIds: uploads.map((u) => u.id) });
  },
  withdrawn(model, { by, withdrawals, lostAnswer }) {
    for (const w of withdrawals) {
      const upload = model.uploads.get(w.uploadId)!;
      if (!upload.counted) {
        assert.equal(w.id, upload.withdrawal, `${w.uploadId} is in the trash under its withdrawal`);
        continue;
      }
      upload.counted = false;
      upload.withdrawal = w.id;
      model.settleHolder(upload.content);
      model.withdrawals.set(w.id, {
        id: w.id,
        uploadId: w.uploadId,
        by,
        open: true,
        mayLoseWithdrawnEvent: lostAnswer,
        restores: 0,
        mayLoseRestoredEvents: 0,
        purged: false,
        mayLosePurgedEvent: false,
      });
    }
  },
  restored(model, { withdrawalId, lostAnswer }) {
    const w = model.withdrawals.get(withdrawalId)!;
    const upload = model.uploads.get(w.uploadId)!;
    assert.equal(upload.withdrawal, withdrawalId);
    upload.counted = true;
    upload.withdrawal = undefined;
    model.settleHolder(upload.content);
    w.open = false;
    w.restores++;
    if (lostAnswer) w.mayLoseRestoredEvents++;
  },
  purged(model, { withdrawalIds, lostAnswer }) {
    const touched = new Set<number>();
    for (const id of withdrawalIds) {
      const w = model.withdrawals.get(id)!;
      const upload = model.uploads.get(w.uploadId)!;
      assert.ok(w.open && upload.withdrawal === id, `withdrawal ${id} was in the trash when purged`);
      w.open = false;
      w.purged = true;
      w.mayLosePurgedEvent = lostAnswer;
      upload.gone = 'purged';
      touched.add(upload.content);
    }
    for (const content of touched) model.deleteUnheld(content);
  },
  disposed(model, { content, fileId, lostAnswer }) {
    assert.equal(model.fileIds.get(content), fileId, `content ${content} is disposed of under its file id`);
    for (const u of model.uploads.values()) {
      if (u.fileId !== fileId) continue;
      u.counted = false;
      u.gone = 'disposed';
      // Its withdrawal, in the trash or purged, is closed: out of the trash and off the receipt.
      if (u.withdrawal !== undefined) model.withdrawals.get(u.withdrawal)!.open = false;
      u.withdrawal = undefined;
    }
    model.settleHolder(content);
    model.fileIds.delete(content);
    model.goneFiles.set(fileId, content);
    model.disposals.set(fileId, { lostAnswer });
  },
  'given up'(model, { what, uploadIds }) {
    for (const id of uploadIds) {
      const upload = model.uploads.get(id)!;
      // A withdrawal leaves an upload out of the archive as it is: a purged row of a receipt
      // (answered as withdrawn before) stays purged, whatever became of the request.
      if (what === 'withdrawal' && upload.gone) continue;
      upload.uncertain = what;
    }
  },
};

/** What the trash lists after the sweep (GET /api/trash). */
export interface TrashItem {
  id: string;
  uploadId: string;
  withdrawnBy: { username: string };
}

/**
 * What became of the requests given up: the sweep has finished or undone each, and the trash and
 * the disposal register (GET /api/disposals) say which; the model takes that effect.
 */
export function settleGivenUp(
  model: Model,
  trash: readonly TrashItem[],
  register: ReadonlyArray<{ fileId: string; state: string }>,
): void {
  for (const upload of model.uploads.values()) {
    if (upload.uncertain === 'disposal') {
      // Begun (an entry in the register, which the sweep finished) or never begun.
      const entry = register.find((d) => d.fileId === upload.fileId);
      if (entry) {
        assert.equal(entry.state, 'disposed', `the sweep finished the disposal of ${upload.fileId}`);
        if (!model.disposals.has(upload.fileId))
          EFFECTS.disposed(model, {
            kind: 'disposed',
            content: upload.content,
            fileId: upload.fileId,
            lostAnswer: true,
          });
      }
      continue;
    }
    if (upload.uncertain === 'purge') {
      // Purged (the sweep finishes one begun) or still in the trash.
      if (!trash.some((w) => w.id === upload.withdrawal))
        EFFECTS.purged(model, { kind: 'purged', withdrawalIds: [upload.withdrawal!], lostAnswer: true });
      continue;
    }
    if (!upload.uncertain) continue;
    // A withdrawal or a restore given up: the upload is in the trash under its withdrawal, or counts.
    const open = trash.find((w) => w.uploadId === upload.id);
    if (upload.withdrawal && (!open || open.id !== upload.withdrawal)) {
      EFFECTS.restored(model, { kind: 'restored', withdrawalId: upload.withdrawal, lostAnswer: true });
    }
    if (open && !upload.withdrawal)
      EFFECTS.withdrawn(model, {
        kind: 'withdrawn',
        by: open.withdrawnBy.username,
        withdrawals: [{ id: open.id, uploadId: open.uploadId }],
        lostAnswer: true,
      });
  }
}
