import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  auditNoteDetail,
  auditNoteTechnical,
  auditNoteText,
  storedAuditNote,
  type AuditNote,
  type AuditNoteCode,
} from '../../shared/audit-notes.js';

/** One note of every kind: a new kind without an example here does not compile. */
const EXAMPLES: { [C in AuditNoteCode]: Extract<AuditNote, { code: C }> } = {
  wrong_password: { code: 'wrong_password' },
  wrong_current_password: { code: 'wrong_current_password' },
  throttled_account: { code: 'throttled_account', failures: 8 },
  throttled_address: { code: 'throttled_address', failures: 20 },
  wrong_passwords: { code: 'wrong_passwords', count: 200, from: 'all', recorded: 100 },
  password_changed: { code: 'password_changed', tokensRevoked: 2 },
  upload: { code: 'upload', via: 'tus', stored: false },
  checksum_mismatch: {
    code: 'checksum_mismatch',
    via: 'batch',
    algorithm: 'MD5',
    declared: 'a'.repeat(32),
    actual: 'b'.repeat(32),
  },
  proof_refused: { code: 'proof_refused', reason: 'expired_claim' },
  proofs_refused: { code: 'proofs_refused', count: 3, of: 5, reasons: { wrong_digests: 2, others_claim: 1 } },
  proofs_unrecorded: { code: 'proofs_unrecorded', limit: 100 },
  download: { code: 'download', length: 70000 },
  unit_created: { code: 'unit_created', path: ['沧州市', '青县', '档案馆'], unitId: 'u-1' },
  unit_renamed: { code: 'unit_renamed', path: ['沧州市', '青县', '档案室'], name: '档案馆', unitId: 'u-1' },
  account_created: {
    code: 'account_created',
    username: 'li',
    accountId: 'a-1',
    displayName: '李四',
    role: 'clerk',
    unit: '沧州市 / 青县',
    by: 'csv',
  },
  account_updated: {
    code: 'account_updated',
    username: 'li',
    accountId: 'a-1',
    role: { from: 'clerk', to: 'admin' },
    name: { from: null, to: '李四' },
  },
  account_disabled: { code: 'account_disabled', username: 'li', accountId: 'a-1' },
  account_named: { code: 'account_named', username: 'li', accountId: 'a-1' },
  password_reset: { code: 'password_reset', username: 'li', accountId: 'a-1', tokensRevoked: 1 },
  token_created: { code: 'token_created', tokenId: 't-1', label: '扫描仪', expiresInDays: null },
  token_revoked: { code: 'token_revoked', tokenId: 't-1', label: '', username: 'li', accountId: 'a-1' },
  pair_reviewed: { code: 'pair_reviewed', nameA: '县志.pdf', nameB: '县志-修订.pdf', note: '修订版，保留两份' },
  pair_reopened: { code: 'pair_reopened', nameA: '县志.pdf', nameB: '县志-修订.pdf' },
  withdrawn: {
    code: 'withdrawn',
    withdrawalId: 'a'.repeat(32),
    uploader: 'li',
    unit: '130922',
    uploadedAt: '2026-11-25T08:00:00.000Z',
    reason: 'other',
    note: '扫描件含身份证号',
  },
  restored: {
    code: 'restored',
    withdrawalId: 'a'.repeat(32),
    uploader: 'li',
    unit: '130922',
    uploadedAt: '2026-11-25T08:00:00.000Z',
    reason: 'wrong_unit',
  },
  hold_placed: { code: 'hold_placed', holdId: 'b'.repeat(32), unit: '河北省 / 沧州市 / 青县', reason: '纪检调查' },
  hold_lifted: { code: 'hold_lifted', holdId: 'b'.repeat(32), files: 2, reason: '纪检调查' },
  disposed: {
    code: 'disposed',
    disposalId: 'b'.repeat(32),
    reason: '保管期满，经鉴定无保存价值',
    approvalRef: '沧档销〔2026〕7号',
    uploads: 3,
    withdrawn: 1,
  },
  purged: {
    code: 'purged',
    expired: true,
    withdrawalId: 'a'.repeat(32),
    uploader: 'li',
    unit: '130922',
    uploadedAt: '2026-11-25T08:00:00.000Z',
    reason: 'repeated',
  },
  content_deleted: { code: 'content_deleted', length: 1234, why: 'last upload purged' },
  viewed: {
    code: 'viewed',
    table: 'savings',
    filters: [
      ['city', '沧州市'],
      ['sort', 'savedBytes'],
    ],
  },
};

describe('audit notes: what an event says, in each language', () => {
  it('words every kind of note in Chinese without English words (ids, numbers and names aside)', () => {
    for (const note of Object.values(EXAMPLES)) {
      const text = auditNoteText('zh-CN', note);
      assert.ok(text.length > 0, note.code);
      // What is left once the note's own values are taken out must be Chinese.
      let rest = text;
      for (const value of JSON.stringify(note).match(/[A-Za-z][\w-]*/g) ?? []) rest = rest.split(value).join('');
      assert.doesNotMatch(rest, /[A-Za-z]{3,}/, `${note.code}: ${text}`);
    }
  });

  it('keeps the English words the log had before notes (its text search finds the same events)', () => {
    assert.equal(auditNoteDetail(EXAMPLES.upload), 'tus: duplicate');
    assert.equal(
      auditNoteDetail(EXAMPLES.proofs_refused),
      "3 of 5 proofs of one request: 2 wrong digests, 1 another account's claim",
    );
    assert.equal(auditNoteDetail(EXAMPLES.viewed), 'savings: city=沧州市&sort=savedBytes');
    // For people, English says it plainly too.
    assert.equal(auditNoteText('en', EXAMPLES.upload), 'Resumable upload: already in the archive, not stored again');
    assert.equal(auditNoteText('en', EXAMPLES.viewed), 'Space saved: city 沧州市, sorted by space saved');
    assert.equal(auditNoteText('zh-CN', EXAMPLES.viewed), '节省空间：市=沧州市，排序=节省空间');
    assert.equal(
      auditNoteText('zh-CN', {
        code: 'viewed',
        filters: [
          ['order', 'asc'],
          ['limit', '50'],
        ],
      }),
      '顺序=升序',
      'paging is left to the details',
    );
    assert.equal(auditNoteText('zh-CN', EXAMPLES.upload), '断点续传：档案库已有，未重复保存');
  });

  it('words a display name given, changed or removed, in each language', () => {
    assert.equal(auditNoteDetail(EXAMPLES.account_updated), 'li (a-1): role clerk → admin; name (none) → "李四"');
    // For people the account's id is left to the details.
    assert.equal(auditNoteText('en', EXAMPLES.account_updated), 'li: role Clerk → Administrator; name (none) → "李四"');
    assert.equal(
      auditNoteText('en', { code: 'account_created', role: 'clerk', by: 'command' }),
      'Clerk, on the server, by its system administrator',
    );
    // A login that reads like a role stays as it is.
    assert.equal(auditNoteText('en', { code: 'account_named', username: 'admin', accountId: 'a-9' }), 'admin');
    assert.equal(auditNoteTechnical(EXAMPLES.account_updated), 'account a-1');
    assert.doesNotMatch(auditNoteText('zh-CN', EXAMPLES.account_updated), /a-1/);
    assert.equal(auditNoteText('zh-CN', EXAMPLES.account_updated), 'li：角色 档案员 → 管理员；姓名 （无） → “李四”');
    const removed: AuditNote = {
      code: 'account_updated',
      username: 'li',
      accountId: 'a-1',
      name: { from: '李四', to: null },
    };
    assert.equal(auditNoteText('zh-CN', removed), 'li：姓名 “李四” → （无）');
    assert.equal(
      auditNoteText('zh-CN', EXAMPLES.account_created),
      'li，姓名 “李四”，档案员，单位 沧州市 / 青县，批量导入',
    );
    assert.equal(
      auditNoteText('en', { code: 'account_created', role: 'clerk', displayName: '王五', by: 'command' }),
      'Clerk, name "王五", on the server, by its system administrator',
    );
  });

  it('keeps checksums out of the plain words, for the details area', () => {
    const note = EXAMPLES.checksum_mismatch;
    assert.doesNotMatch(auditNoteText('zh-CN', note), /a{32}|b{32}/);
    assert.match(auditNoteTechnical(note)!, /^MD5 b{32}, not the declared a{32}$/);
    assert.equal(auditNoteTechnical(EXAMPLES.upload), undefined);
  });

  it('reads back what a store kept, and drops what this version does not know', () => {
    assert.deepEqual(storedAuditNote(JSON.stringify(EXAMPLES.download)), EXAMPLES.download);
    assert.deepEqual(storedAuditNote(EXAMPLES.download), EXAMPLES.download);
    assert.equal(storedAuditNote('{"code":"from_a_later_version"}'), null);
    assert.equal(storedAuditNote('not json'), null);
    assert.equal(storedAuditNote(null), null);
  });
});
