import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReceiptRowView } from '../../shared/receipts.js';
import { transferVolumes } from '../../client/src/pages/transfer-volumes.js';

const row = (path: string, size: number, outcome: ReceiptRowView['outcome'] = 'stored'): ReceiptRowView => ({
  path,
  size,
  outcome,
  at: '2026-11-28T01:00:00Z',
});

describe('移交清单: one line per 案卷 (sub-folder) with its files and size', () => {
  it('takes the sub-folders of the one folder dropped as the 案卷, loose files first, by name', () => {
    assert.deepEqual(
      transferVolumes([
        row('2026年移交/案卷002/第1页.tif', 10),
        row('2026年移交/案卷001/第1页.tif', 20),
        row('2026年移交/案卷001/第2页.tif', 30, 'instant'),
        row('2026年移交/案卷001/附件/图.jpg', 5, 'duplicate'),
        row('2026年移交/目录.xls', 7),
      ]),
      [
        { name: '', files: 1, bytes: 7 },
        { name: '案卷001', files: 3, bytes: 55 },
        { name: '案卷002', files: 1, bytes: 10 },
      ],
    );
  });

  it('leaves out what was not handed over: failed, skipped and withdrawn files', () => {
    const withdrawn = {
      ...row('卷/案卷1/b.pdf', 100),
      withdrawal: {
        id: 'w',
        withdrawnAt: '2026-11-28T02:00:00Z',
        withdrawnBy: 'clerk',
        reason: 'wrong_file',
        note: null,
      },
    };
    assert.deepEqual(
      transferVolumes([
        row('卷/案卷1/a.pdf', 1),
        row('卷/案卷1/c.pdf', 2, 'failed'),
        row('卷/案卷2/d.pdf', 3, 'skipped'),
        withdrawn,
      ]),
      [{ name: '案卷1', files: 1, bytes: 1 }],
    );
  });

  it('takes the first folder of each path when files were dropped from several folders', () => {
    assert.deepEqual(transferVolumes([row('甲/a.pdf', 1), row('乙/b.pdf', 2), row('c.pdf', 4)]), [
      { name: '', files: 1, bytes: 4 },
      { name: '乙', files: 1, bytes: 2 },
      { name: '甲', files: 1, bytes: 1 },
    ]);
  });
});
