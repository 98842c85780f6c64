import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../client/src/errors.js';
import { describeError } from '../../client/src/i18n/index.js';
import { receiptReasonText, reasonText } from '../../client/src/upload/outcome-text.js';
import { reasonParts, receiptReason } from '../../shared/receipts.js';

describe('why a file failed, in the clerk’s words', () => {
  it('states the archive’s size limit when the server refuses a file as too large', () => {
    const refused = new ApiError(413, 'payload_too_large', 'too large', undefined, { limitBytes: 30 * 1024 * 1024 });
    assert.equal(
      describeError('zh-CN', refused),
      '文件大小超过上限（30.0 MB），无法上传。请把文件拆分或压缩后再上传，或联系管理员。',
    );
    assert.match(describeError('en', refused), /\(30\.0 MB\)/);
  });

  it('keeps an over-size file’s limit on its receipt, and says it when the receipt is read', () => {
    const reason = receiptReason('payload_too_large', String(2 * 1024 * 1024));
    assert.deepEqual(reasonParts(reason), { code: 'payload_too_large', limitBytes: 2 * 1024 * 1024 });
    assert.equal(
      receiptReasonText('zh-CN', reason),
      '文件超过 2.0 MB 的上限，无法上传。请拆分或压缩后再上传，或联系管理员',
    );
    // Other failures keep their code alone.
    assert.equal(receiptReason('checksum_mismatch', 'MD5 differs'), 'checksum_mismatch');
    assert.equal(receiptReasonText('zh-CN', 'claim_rejected'), reasonText('zh-CN', 'claim_rejected'));
  });

  it('tells a refused instant upload what happened instead', () => {
    assert.equal(reasonText('zh-CN', 'claim_rejected'), '无法秒传，已改为普通上传。');
  });

  it('says what a conflict is about, and keeps the upload wording for the others', () => {
    const own = new ApiError(409, 'conflict', 'You cannot disable your own account.', undefined, {
      reason: 'own_account_disabled',
    });
    assert.equal(describeError('zh-CN', own), '不能停用自己的账号。');
    assert.equal(describeError('en', own), 'You cannot disable your own account.');
    const upload = new ApiError(409, 'conflict', 'The upload changed.', undefined, {});
    assert.equal(describeError('zh-CN', upload), '上传状态冲突，请重试。');
    const strange = new ApiError(409, 'conflict', 'x', undefined, { reason: 'toString' });
    assert.equal(describeError('zh-CN', strange), '上传状态冲突，请重试。', 'only reasons of its own');
  });
});
