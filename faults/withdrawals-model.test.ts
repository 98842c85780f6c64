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
});
