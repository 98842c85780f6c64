import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SearchTerms, snippetOf } from '../../server/services/search-terms.js';

const marked = (s: { text: string; marks: Array<[number, number]> }) => s.marks.map(([a, b]) => s.text.slice(a, b));

describe('search terms', () => {
  const terms = new SearchTerms();

  it('cuts a text into its distinct normalised words, the shorter words of a long one too', async () => {
    const words = await terms.ofText('县人民政府關於 ＯＣＲ 的通知。县人民政府');
    for (const word of ['人民政府', '人民', '政府', '关于', 'ocr', '通知']) assert.ok(words.includes(word), word);
    assert.equal(words.filter((w) => w === '人民政府').length, 1, 'each word once');
    assert.ok(!words.includes('的'), 'stop words are not terms');
    assert.ok(!words.some((w) => /[\s。]/.test(w)), 'no spacing or punctuation');
  });

  it('cuts a query plainly, each of its words a term', async () => {
    assert.deepEqual(await terms.ofQuery('档案数字化'), ['档案', '数字化']);
    assert.deepEqual(await terms.ofQuery('  Archive, 档案!  '), ['archive', '档案']);
    assert.deepEqual(await terms.ofQuery('的 和 。'), []);
  });
});

describe('snippets', () => {
  it('shows the text around the first word found, every word in it marked', () => {
    const text = `${'前言'.repeat(40)}这是关于档案数字化的通知，档案要按时扫描。${'后记'.repeat(100)}`;
    const snippet = snippetOf(text, ['档案', '扫描']);
    assert.ok(snippet.text.startsWith('…') && snippet.text.endsWith('…'), snippet.text);
    assert.ok(snippet.text.length <= 162);
    assert.deepEqual(marked(snippet), ['档案', '档案', '扫描']);
  });

  it('marks the words as written: traditional script, capitals and full-width letters', () => {
    const snippet = snippetOf('關於檔案的 ＯＣＲ 與 Archive', ['档案', 'ocr', 'archive']);
    assert.deepEqual(marked(snippet), ['檔案', 'ＯＣＲ', 'Archive']);
  });

  it('keeps marks right where spacing is collapsed and where normalisation changes a length', () => {
    const snippet = snippetOf('第一行\n\n\n   ㈠档案   在此', ['档案', '在此']);
    assert.equal(snippet.text, '第一行 ㈠档案 在此');
    assert.deepEqual(marked(snippet), ['档案', '在此']);
  });

  it('shows the beginning, unmarked, when no word is found', () => {
    assert.deepEqual(snippetOf('没有要找的词', ['火星']), { text: '没有要找的词', marks: [] });
  });
});
