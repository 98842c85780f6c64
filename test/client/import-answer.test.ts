import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerRows, IMPORT_TEMPLATE } from '../../client/src/pages/accounts/import-answer.js';

/** An import's answer as the server writes it (server/http/csv.ts): a BOM, a header, CRLF lines. */
const HEADER = '用户名,姓名,角色,单位,一次性密码（首次登录后须修改）';
const answer = (...lines: string[]) => `\uFEFF${[HEADER, ...lines].map((l) => `${l}\r\n`).join('')}`;

describe("the accounts import's answer, read for the page", () => {
  it('gives each account its five cells, the header and the byte-order mark left out', () => {
    assert.deepEqual(
      answerRows(answer('zhangsan,张三,档案员,河北省 / 承德市,Kq7-mV2p', 'lisi,,管理员,全部,Zt4-hB8w')),
      [
        ['zhangsan', '张三', '档案员', '河北省 / 承德市', 'Kq7-mV2p'],
        // No name given: the cell is empty and the password stays in its column.
        ['lisi', '', '管理员', '全部', 'Zt4-hB8w'],
      ],
    );
  });

  it('reads a quoted cell whole, with its commas and doubled quotes', () => {
    assert.deepEqual(answerRows(answer('wang,"Wang, ""Xiao"" Er",档案员,"A, B",p,w')), [
      ['wang', 'Wang, "Xiao" Er', '档案员', 'A, B', 'p', 'w'],
    ]);
  });

  it('has no rows for an answer with its header only, and takes bare line feeds too', () => {
    assert.deepEqual(answerRows(answer()), []);
    assert.deepEqual(answerRows(`${HEADER}\nzhaoliu,赵六,档案员,x,pw\n`), [['zhaoliu', '赵六', '档案员', 'x', 'pw']]);
  });

  it('offers a template whose header the import recognises and one example row, marked so it is never imported', () => {
    const [header, example, ...rest] = IMPORT_TEMPLATE.replace(/^\uFEFF/, '').split('\r\n');
    assert.equal(header, '用户名,角色,单位代码,姓名');
    assert.equal(example, '示例：zhangsan,档案员,130922100,张三');
    assert.deepEqual(rest, ['']);
  });
});
