import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../client/src/errors.js';
import { describeError, translator } from '../../client/src/i18n/index.js';

describe('撤回 refused, in the clerk’s words', () => {
  it('says how many days a clerk may withdraw their own uploads, as the server has it, and whom to ask', () => {
    const tooLate = (days: number) =>
      new ApiError(403, 'withdrawal_too_late', '上传已超过 …', undefined, { withdrawDays: days, count: 1 });
    assert.equal(describeError('zh-CN', tooLate(30)), '上传已超过 30 天，请联系管理员撤回。');
    assert.equal(describeError('zh-CN', tooLate(7)), '上传已超过 7 天，请联系管理员撤回。');
    assert.equal(
      describeError('en', tooLate(7)),
      'This upload is more than 7 days old. Ask an administrator to withdraw it.',
    );
  });

  it('promises a restore within the trash’s days, as the server keeps them', () => {
    assert.equal(
      translator('zh-CN')('withdrawEffect', { days: 14 }),
      '撤回后，这些文件不再计入上传次数和各类统计；14 天内可在回收站恢复。',
    );
    assert.match(translator('en')('trashHint', { days: 14 }), /^Withdrawn files stay here for 14 days/);
  });
});
