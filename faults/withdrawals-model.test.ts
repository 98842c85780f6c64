import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EFFECTS, Model, settleGivenUp } from './withdrawals-model.js';

/**
 * The model of crash-during-withdrawals on its own: what it expects of the archive after requests
 * given up, in the cases a seed found it wrong (MongoDB, FAULT_SEED=613 and 615).
 */
describe('the withdrawals fault model', () => {
  /** A receipt of two uploads (contents 0 and 1), the first withdrawn and purged: its content deleted. */
  function receiptWithAPurgedRow(): Model {
    const model = new Model();
    EFFECTS.counted(model, {
      kind: 'counted',
      receipt: 'r1',
      uploads: [
        { id: 'u1', clerk: 0, content: 0, fileId: 'f1', status: 'stored', carries: true },
        { id: 'u2', clerk: 0, content: 1, fileId: 'f2', status: 'stored', carries: true },
      ],
    });
    EFFECTS.withdrawn(model, {
      kind: 'withdrawn',
      by: 'clerk-a',
      withdrawals: [{ id: 'w1', uploadId: 'u1' }],
      lostAnswer: false,
    });
    EFFECTS.purged(model, { kind: 'purged', withdrawalIds: ['w1'], lostAnswer: false });
    return model;
  }

  it('a withdrawal of a receipt given up leaves its purged row purged, when the sweep undid the withdrawal', () => {
    const model = receiptWithAPurgedRow();
    EFFECTS['given up'](model, { kind: 'given up', what: 'withdrawal', uploadIds: ['u1', 'u2'] });
    settleGivenUp(model, [], []);

    assert.deepEqual(
      model.counted().map((u) => u.id),
      ['u2'],
      'only the row that was never withdrawn counts',
    );
    const purged = model.uploads.get('u1')!;
    assert.equal(purged.gone, 'purged');
    assert.equal(purged.withdrawal, 'w1', 'the receipt shows the purged row under its withdrawal');
    assert.equal(model.withdrawals.get('w1')!.restores, 0, 'a purged withdrawal is never restored');
    assert.ok(model.goneFiles.has('f1'), 'its content stays deleted');
    assert.equal(model.fileIds.get(0), undefined);
  });

  it('a withdrawal of a receipt given up that the sweep finished: the other rows in the trash, the purged one purged', () => {
    const model = receiptWithAPurgedRow();
    EFFECTS['given up'](model, { kind: 'given up', what: 'withdrawal', uploadIds: ['u1', 'u2'] });
    settleGivenUp(model, [{ id: 'w2', uploadId: 'u2', withdrawnBy: { username: 'clerk-a' } }], []);

    assert.deepEqual(model.counted(), []);
    assert.equal(model.uploads.get('u2')!.withdrawal, 'w2');
    assert.equal(model.uploads.get('u1')!.gone, 'purged');
    assert.equal(model.uploads.get('u1')!.withdrawal, 'w1');
  });

  it('a purged upload is not uncertain after a withdrawal given up: its content can be uploaded again', () => {
    const model = receiptWithAPurgedRow();
    EFFECTS['given up'](model, { kind: 'given up', what: 'withdrawal', uploadIds: ['u1', 'u2'] });
    const contents = [
      { data: Buffer.alloc(1), worker: 0 },
      { data: Buffer.alloc(2), worker: 0 },
    ];
    assert.deepEqual(model.uploadable(0, contents), [0], 'content 0 (deleted) may be uploaded anew; content 1 waits');
  });

  describe('holds (冻结)', () => {
    /** Two clerks in two units; content 0 uploaded by clerk 0 (unit-a), content 1 by clerk 1 (unit-b). */
    function twoUnits(): Model {
      const model = new Model((clerk) => ['unit-a', 'unit-b'][clerk]!);
      EFFECTS.counted(model, {
        kind: 'counted',
        uploads: [
          { id: 'u1', clerk: 0, content: 0, fileId: 'f1', status: 'stored', carries: true },
          { id: 'u2', clerk: 1, content: 1, fileId: 'f2', status: 'stored', carries: true },
        ],
      });
      return model;
    }
    const place = (model: Model, hold: { reason: string; files?: string[]; unit?: string }, id = 'h1') =>
      EFFECTS.held(model, { kind: 'held', hold: { id, by: 'boss', ...hold }, lostAnswer: false });

    it('a file hold holds the files it names until it is lifted', () => {
      const model = twoUnits();
      place(model, { reason: 'r1', files: ['f1'] });
      assert.deepEqual([model.held('f1'), model.held('f2')], [true, false]);
      EFFECTS.lifted(model, { kind: 'lifted', reason: 'r1', lostAnswer: false });
      assert.equal(model.held('f1'), false);
    });

    it('a unit hold holds every file an upload of the unit made, uploaded after it too, purged ones too', () => {
      const model = twoUnits();
      place(model, { reason: 'r1', unit: 'unit-b' });
      assert.deepEqual([model.held('f1'), model.held('f2')], [false, true]);
      // Clerk 1 (unit-b) counts content 0 after the hold: its file is held now.
      EFFECTS.counted(model, {
        kind: 'counted',
        uploads: [{ id: 'u3', clerk: 1, content: 0, fileId: 'f1', status: 'duplicate', carries: true }],
      });
      assert.equal(model.held('f1'), true);
      // The ledger keeps the record of an upload withdrawn and purged: the unit's hold still covers the file.
      EFFECTS.withdrawn(model, {
        kind: 'withdrawn',
        by: 'boss',
        withdrawals: [{ id: 'w3', uploadId: 'u3' }],
        lostAnswer: false,
      });
      EFFECTS.purged(model, { kind: 'purged', withdrawalIds: ['w3'], lostAnswer: false });
      assert.equal(model.held('f1'), true);
    });

    it('a purge leaves the content of a held file: the hold keeps it', () => {
      const model = twoUnits();
      EFFECTS.withdrawn(model, {
        kind: 'withdrawn',
        by: 'boss',
        withdrawals: [{ id: 'w1', uploadId: 'u1' }],
        lostAnswer: false,
      });
      place(model, { reason: 'r1', files: ['f1'] });
      EFFECTS.purged(model, { kind: 'purged', withdrawalIds: ['w1'], lostAnswer: false });
      assert.equal(model.fileIds.get(0), 'f1', 'content 0 stays in the catalog');
      assert.ok(!model.goneFiles.has('f1'));
    });

    it('a refusal as held is taken only for files the model holds', () => {
      const model = twoUnits();
      place(model, { reason: 'r1', files: ['f1'] });
      EFFECTS.refused(model, { kind: 'refused', what: 'withdrawal', fileIds: ['f1'] });
      assert.throws(
        () => EFFECTS.refused(model, { kind: 'refused', what: 'disposal', fileIds: ['f2'] }),
        /f2 refused as held/,
      );
    });

    it('a hold given up leaves its files unknown (neither held nor free) until the holds’ list says', () => {
      for (const listed of [true, false]) {
        const model = twoUnits();
        EFFECTS['hold given up'](model, {
          kind: 'hold given up',
          what: 'place',
          hold: { reason: 'r1', files: ['f1'], by: 'top' },
        });
        assert.equal(model.held('f1'), undefined, 'unknown: withdrawals, purges and disposals of it wait');
        assert.equal(model.held('f2'), false);
        assert.ok(model.anythingUncertain(), 'unit holds and emptying the trash wait');
        settleGivenUp(model, [], [], listed ? [{ id: 'h9', reason: 'r1', active: true }] : []);
        assert.equal(model.held('f1'), listed, listed ? 'placed by the first try' : 'never placed');
        assert.equal(model.holds.get('r1')?.id, listed ? 'h9' : undefined);
        if (listed) assert.equal(model.holds.get('r1')!.mayLosePlacedEvent, true, 'its event may be lost to the kill');
        assert.ok(!model.anythingUncertain());
      }
    });

    it('a lift given up: the list says whether the hold still holds', () => {
      for (const active of [true, false]) {
        const model = twoUnits();
        place(model, { reason: 'r1', unit: 'unit-a' });
        EFFECTS['hold given up'](model, { kind: 'hold given up', what: 'lift', hold: { reason: 'r1', by: 'boss' } });
        assert.equal(model.held('f1'), undefined);
        settleGivenUp(model, [], [], [{ id: 'h1', reason: 'r1', active }]);
        assert.equal(model.held('f1'), active);
        assert.equal(model.holds.get('r1')!.mayLoseLiftedEvent, !active);
      }
    });

    it('a purge given up of a file a hold given up covered is settled after the hold', () => {
      // (The suite gives neither up together on one file; the order still matters for what is deleted.)
      const model = twoUnits();
      EFFECTS.withdrawn(model, {
        kind: 'withdrawn',
        by: 'boss',
        withdrawals: [{ id: 'w1', uploadId: 'u1' }],
        lostAnswer: false,
      });
      EFFECTS['given up'](model, { kind: 'given up', what: 'purge', uploadIds: ['u1'] });
      EFFECTS['hold given up'](model, {
        kind: 'hold given up',
        what: 'place',
        hold: { reason: 'r1', files: ['f1'], by: 'top' },
      });
      settleGivenUp(model, [], [], [{ id: 'h1', reason: 'r1', active: true }]);
      assert.equal(model.uploads.get('u1')!.gone, 'purged');
      assert.equal(model.fileIds.get(0), 'f1', 'held: its content stays');
    });
  });
});
