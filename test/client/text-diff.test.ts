import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { textDifferences, type DiffPart } from '../../client/src/pages/reports/text-diff.js';

const marked = (parts: DiffPart[]) => parts.filter((p) => p.differs).map((p) => p.text);
const whole = (parts: DiffPart[]) => parts.map((p) => p.text).join('');

describe('where two near-duplicate texts differ (the pair’s detail)', () => {
  it('marks the characters of Chinese text that the other text lacks, and keeps each text whole', () => {
    const a = '各单位应于次年六月底前将上一年度整理完毕的档案向县档案馆移交。';
    const b = '各单位应于次年五月底前将上年度整理完毕的档案移交县档案馆。';
    const [x, y] = textDifferences(a, b);
    assert.equal(whole(x), a);
    assert.equal(whole(y), b);
    assert.deepEqual(marked(x), ['六', '一', '向', '移交']);
    assert.deepEqual(marked(y), ['五', '移交']);
  });

  it('compares Latin words and numbers whole, not letter by letter', () => {
    const [x, y] = textDifferences('归档格式采用PDF，2023年', '归档格式采用OFD，2024年');
    assert.deepEqual(marked(x), ['PDF', '2023']);
    assert.deepEqual(marked(y), ['OFD', '2024']);
  });

  it('marks nothing in equal texts, and everything where one text is empty', () => {
    assert.deepEqual(textDifferences('同一句话。', '同一句话。').map(marked), [[], []]);
    assert.deepEqual(textDifferences('', '只在一边。').map(marked), [[], ['只在一边。']]);
  });
});
