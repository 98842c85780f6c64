import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  countItems,
  pathInDrop,
  rowStatus,
  statusText,
  transferRows,
  type Row,
} from '../../client/src/pages/upload/transfer-rows.js';
import type { Outcome, Phase, UploadItem } from '../../client/src/upload/folder-upload.js';

function item(path: string, phase: Phase, outcome?: Outcome, size = 100, progress = 0): UploadItem {
  const slash = path.lastIndexOf('/');
  return {
    path,
    folder: slash < 0 ? '' : path.slice(0, slash),
    size,
    lastModified: 0,
    type: '',
    file: undefined,
    key: path,
    phase,
    progress,
    outcome,
    running: false,
  };
}
const instant: Outcome = { kind: 'instant', fileId: 'f', uploadCount: 2, claimId: 'c' };
const stored: Outcome = { kind: 'stored', fileId: 'g', uploadCount: 1, via: 'batch' };
const failed: Outcome = { kind: 'failed', code: 'checksum_mismatch', message: 'MD5 differs', retry: true };
const shown = (rows: Row[]) => rows.map((r) => (r.kind === 'folder' ? `[${r.folder}]` : r.item.path));

describe('the upload page’s transfer list', () => {
  const items = [
    item('卷宗/b.pdf', 'done', stored),
    item('卷宗/a.pdf', 'waiting'),
    item('卷宗/c.pdf', 'failed', failed),
    item('卷宗/d.pdf', 'sending', undefined, 200, 50),
    item('附件/e.jpg', 'done', instant),
  ];

  it('groups files by folder, failures first, then what moves, then the rest by path', () => {
    assert.deepEqual(shown(transferRows(items, 'all', new Set())), [
      '[卷宗]',
      '卷宗/c.pdf',
      '卷宗/d.pdf',
      '卷宗/a.pdf',
      '卷宗/b.pdf',
      '[附件]',
      '附件/e.jpg',
    ]);
    const heading = transferRows(items, 'all', new Set())[0]!;
    assert.ok(heading.kind === 'folder');
    assert.deepEqual([heading.total, heading.finished, heading.failed], [4, 2, 1]);
  });

  it('shows one kind of outcome, hides folders with none of it, and folds a folder away', () => {
    assert.deepEqual(shown(transferRows(items, 'instant', new Set())), ['[附件]', '附件/e.jpg']);
    assert.deepEqual(shown(transferRows(items, 'unfinished', new Set(['卷宗']))), ['[卷宗]']);
  });

  it('leaves out the heading of a list of loose files', () => {
    assert.deepEqual(shown(transferRows([item('x.pdf', 'waiting')], 'all', new Set())), ['x.pdf']);
  });

  it('counts the outcomes, and says where a file stands', () => {
    assert.deepEqual(countItems(items), { instant: 1, stored: 1, failed: 1, skipped: 0, unfinished: 2 });
    assert.equal(statusText('zh-CN', items[3]!), '正在上传 50 B / 200 B（25%）');
    assert.match(statusText('en', items[2]!), /^Failed: /);
  });

  it('counts a file skipped as sent before apart from the uploaded ones, filters it, and says when it was sent', () => {
    const skipped: Outcome = {
      kind: 'skipped',
      fileId: 'f',
      lastUploadTime: '2026-11-28T01:56:00.000Z',
      uploadCount: 11,
    };
    const list = [...items, item('卷宗/旧.pdf', 'done', skipped), item('卷宗/问.pdf', 'asking')];
    assert.deepEqual(countItems(list), { instant: 1, stored: 1, failed: 1, skipped: 1, unfinished: 3 });
    assert.deepEqual(shown(transferRows(list, 'skipped', new Set())), ['[卷宗]', '卷宗/旧.pdf']);
    assert.match(statusText('zh-CN', list[5]!), /^跳过：本单位已于 2026年11月28日 \d{2}:56 上传过，本次未登记$/);
    assert.match(statusText('en', list[5]!), /^Skipped: already uploaded to your unit on Nov 28, 2026/);
    assert.equal(statusText('zh-CN', list[6]!), '等待您确认：本单位已上传过此文件');
  });

  it('shows a large file’s bytes as they are sent, so its row moves a megabyte at a time', () => {
    const large = item('卷宗/全卷.tif', 'sending', undefined, 50 * 1024 * 1024, 12 * 1024 * 1024 + 1);
    assert.equal(statusText('zh-CN', large), '正在上传 12.0 MB / 50.0 MB（24%）');
    assert.equal(statusText('en', large), 'Uploading 12.0 MB / 50.0 MB (24%)');
  });

  it('marks a file whose request waits to be tried again, in words and in its data-status', () => {
    const waiting = { ...item('卷宗/f.pdf', 'sending'), retrying: true };
    assert.equal(statusText('zh-CN', waiting), '等待重试');
    assert.equal(rowStatus(waiting), 'retrying');
    assert.equal(rowStatus({ ...waiting, outcome: stored }), 'stored', 'an outcome wins');
    assert.equal(rowStatus(item('卷宗/g.pdf', 'sending')), 'sending');
    // Queued behind the requests that wait (the batches' slots are theirs): waiting as well.
    assert.equal(rowStatus(item('卷宗/h.pdf', 'checking'), true), 'retrying');
    assert.equal(statusText('en', item('卷宗/h.pdf', 'checking'), true), 'Waiting to retry');
    assert.equal(rowStatus(item('卷宗/i.pdf', 'hashing'), true), 'hashing', 'work on this computer goes on');
    assert.equal(rowStatus(item('卷宗/j.pdf', 'done', stored), true), 'stored');
  });

  it('says of a page identical to another of the same drop which one, by its path in the drop, not a repeat count', () => {
    const copy = {
      ...item('2026年移交/案卷007/第0034页.jpg', 'done', instant),
      sameAs: '2026年移交/案卷007/第0033页.jpg',
    };
    assert.equal(statusText('zh-CN', copy), '与本批 案卷007/第0033页.jpg 相同，只保存一份');
    assert.equal(statusText('en', copy), 'Identical to 案卷007/第0033页.jpg in this batch: kept once');
    assert.equal(pathInDrop('单独.jpg'), '单独.jpg');
    // Not the same as another page of the drop: the archive's count is told, as before.
    assert.equal(statusText('zh-CN', item('a.jpg', 'done', instant)), '秒传完成（档案库已有），您第 2 次上传此文件');
  });
});
