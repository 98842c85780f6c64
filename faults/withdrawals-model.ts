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
  restores: number;
  /** Purged from the trash (it stays the upload's withdrawal, never restorable). */
  purged: boolean;
}

/**
 * A hold (冻结) as the model knows it, by its reason (each request's own, so a hold whose answer was
 * lost is found by it): on files or on a unit (a clerk's unit, by name).
 */
export interface ModelHold {
  reason: string;
  /** The archive's id, once an answer or the holds' list told it. */
  id?: string;
  files?: string[];
  unit?: string;
  /** Who placed it: who may lift it (and the top-level administrator, who sees every hold). */
  by: string;
  active: boolean;
  /** Its placement or lift was given up after a lost answer: what happened is read back after the sweep. */
  uncertain?: 'place' | 'lift';
  /** A request that placed or lifted it lost an answer: its audit event may be lost, never doubled. */
  mayLosePlacedEvent: boolean;
  mayLoseLiftedEvent: boolean;
}

export class Model {
  /** `unitOf`: a clerk's unit, by name (what a unit hold covers: every file an upload of the unit holds). */
  constructor(private readonly unitOf: (clerk: number) => string = () => 'unit') {}
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
  /** Holds by their reason, active or lifted. */
  readonly holds = new Map<string, ModelHold>();
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
  /** Whether a live file is held now (冻结): undefined when a hold that would cover it is uncertain. */
  held(fileId: string): boolean | undefined {
    let unknown = false;
    for (const h of this.holds.values()) {
      if (!h.active && !h.uncertain) continue;
      if (!this.covers(h, fileId)) continue;
      if (h.uncertain) unknown = true;
      else return true;
    }
    return unknown ? undefined : false;
  }
  /**
   * A file hold covers the files it names; a unit hold every file with an upload of the unit,
   * counted, withdrawn or purged (the ledger's record of upload actions; docs/decisions/holds.md).
   */
  covers(hold: ModelHold, fileId: string): boolean {
    if (hold.files) return hold.files.includes(fileId);
    return [...this.uploads.values()].some((u) => u.fileId === fileId && this.unitOf(u.clerk) === hold.unit);
  }
  /** A hold given up and not settled yet, or an upload uncertain: an operation on every worker's files waits. */
  anythingUncertain(): boolean {
    return [...this.uploads.values()].some((u) => u.uncertain) || [...this.holds.values()].some((h) => h.uncertain);
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
   * file's uploads counts or waits in the trash and no hold covers it (docs/decisions/purge.md).
   */
  deleteUnheld(content: number): void {
    const fileId = this.fileIds.get(content);
    if (fileId === undefined) return;
    const held = this.held(fileId);
    assert.notEqual(held, undefined, `file ${fileId} purged while a hold on it is uncertain`);
    if (held) return;
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
  | { kind: 'given up'; what: 'withdrawal' | 'purge' | 'disposal'; uploadIds: string[] }
  /** A withdrawal or a disposal refused whole (423 file_on_hold): nothing changed. */
  | { kind: 'refused'; what: 'withdrawal' | 'disposal'; fileIds: string[] }
  | {
      kind: 'held';
      hold: { id: string; reason: string; files?: string[]; unit?: string; by: string };
      lostAnswer: boolean;
    }
  | { kind: 'lifted'; reason: string; lostAnswer: boolean }
  | {
      kind: 'hold given up';
      what: 'place' | 'lift';
      hold: Omit<ModelHold, 'active' | 'mayLosePlacedEvent' | 'mayLoseLiftedEvent'>;
    };

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
  withdrawn(model, { by, withdrawals }) {
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
        restores: 0,
        purged: false,
      });
    }
  },
  restored(model, { withdrawalId }) {
    const w = model.withdrawals.get(withdrawalId)!;
    const upload = model.uploads.get(w.uploadId)!;
    assert.equal(upload.withdrawal, withdrawalId);
    upload.counted = true;
    upload.withdrawal = undefined;
    model.settleHolder(upload.content);
    w.open = false;
    w.restores++;
  },
  purged(model, { withdrawalIds }) {
    const touched = new Set<number>();
    for (const id of withdrawalIds) {
      const w = model.withdrawals.get(id)!;
      const upload = model.uploads.get(w.uploadId)!;
      assert.ok(w.open && upload.withdrawal === id, `withdrawal ${id} was in the trash when purged`);
      w.open = false;
      w.purged = true;
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
  refused(model, { fileIds }) {
    for (const fileId of fileIds) assert.equal(model.held(fileId), true, `${fileId} refused as held`);
  },
  held(model, { hold, lostAnswer }) {
    assert.ok(!model.holds.has(hold.reason), `hold "${hold.reason}" is placed once`);
    model.holds.set(hold.reason, { ...hold, active: true, mayLosePlacedEvent: lostAnswer, mayLoseLiftedEvent: false });
  },
  lifted(model, { reason, lostAnswer }) {
    const hold = model.holds.get(reason)!;
    hold.active = false;
    hold.uncertain = undefined;
    hold.mayLoseLiftedEvent = lostAnswer;
  },
  'hold given up'(model, { what, hold }) {
    if (what === 'place') {
      assert.ok(!model.holds.has(hold.reason), `hold "${hold.reason}" is placed once`);
      model.holds.set(hold.reason, {
        ...hold,
        active: false,
        uncertain: 'place',
        mayLosePlacedEvent: true,
        mayLoseLiftedEvent: false,
      });
    } else model.holds.get(hold.reason)!.uncertain = 'lift';
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

/** What the holds' list says of a hold (GET /api/holds?state=all, as the top-level administrator). */
export interface HoldItem {
  id: string;
  reason: string;
  active: boolean;
}

/**
 * What became of the requests given up: the sweep has finished or undone each, and the trash, the
 * disposal register (GET /api/disposals) and the holds' list say which; the model takes that
 * effect. Holds first: whether a purge finished by the sweep deleted its content depends on them
 * (a hold or lift is given up only on files no other request given up touches, so they held the
 * same when the sweep ran).
 */
export function settleGivenUp(
  model: Model,
  trash: readonly TrashItem[],
  register: ReadonlyArray<{ fileId: string; state: string }>,
  holds: readonly HoldItem[] = [],
): void {
  for (const hold of model.holds.values()) {
    if (!hold.uncertain) continue;
    const listed = holds.find((h) => h.reason === hold.reason);
    if (hold.uncertain === 'place') {
      // Placed (listed under its reason) or never.
      hold.uncertain = undefined;
      if (listed) {
        hold.id = listed.id;
        hold.active = listed.active;
        assert.ok(listed.active, `hold "${hold.reason}", placed by a request given up, was never lifted`);
      } else model.holds.delete(hold.reason);
      continue;
    }
    assert.ok(listed, `hold "${hold.reason}" is listed`);
    if (listed.active) hold.uncertain = undefined;
    else EFFECTS.lifted(model, { kind: 'lifted', reason: hold.reason, lostAnswer: true });
  }
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
