import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cleanContentType,
  cleanFileName,
  cleanText,
  cleanUploadPath,
  MAX_FILE_NAME_LENGTH,
  MAX_UPLOAD_PATH_LENGTH,
} from '../../shared/file-name.js';

describe('cleanFileName', () => {
  it('keeps Chinese and other printable names exactly', () => {
    for (const name of ['青县档案局 2024 第3号.pdf', 'Überweisung (1).docx', 'a b  c.txt', '50%.pdf'])
      assert.equal(cleanFileName(name), name);
  });

  it('drops directories sent by browsers and scripts', () => {
    assert.equal(cleanFileName('../../etc/passwd'), 'passwd');
    assert.equal(cleanFileName('C:\\Users\\clerk\\报告.docx'), '报告.docx');
    assert.equal(cleanFileName('folder/'), '未命名');
    assert.equal(cleanFileName('..'), '未命名');
  });

  it('removes NUL, control and bidirectional-override characters', () => {
    assert.equal(cleanFileName('a\u0000b\u0007c\u007f.txt'), 'abc.txt');
    assert.equal(cleanFileName('invoice\u202Efdp.exe'), 'invoicefdp.exe');
    assert.equal(cleanFileName('\u2066x\u2069\u200F.pdf'), 'x.pdf');
    assert.equal(cleanFileName('\u0000'), '未命名');
  });

  it('removes every invisible character: format (Cf), separators (Zl, Zp) and default-ignorables', () => {
    const invisible = [
      '\u200B',
      '\uFEFF',
      '\u061C',
      '\u2028',
      '\u2029',
      '\u00AD',
      '\u2060',
      '\u180E',
      '\u3164',
      '\u115F',
      '\u{E0001}',
      '\uFE0F',
      '\u200D',
    ];
    for (const c of invisible) {
      assert.equal(cleanFileName(`报${c}告.pdf`), '报告.pdf', `U+${c.codePointAt(0)!.toString(16)}`);
      assert.equal(cleanFileName(`${c}${c}`), '未命名', `U+${c.codePointAt(0)!.toString(16)} alone`);
    }
  });

  it('names a file whose name is left blank 未命名, keeping its extension', () => {
    assert.equal(cleanFileName('\u200B.pdf'), '未命名.pdf');
    assert.equal(cleanFileName('\u200B\u2028 \u3000.docx'), '未命名.docx');
    assert.equal(cleanFileName('   '), '未命名');
    assert.equal(cleanFileName('..pdf'), '未命名.pdf');
  });

  it('keeps emoji whole: joiner sequences, variation selectors, skin tones and subdivision flags', () => {
    for (const emoji of [
      '👩\u200D💻',
      '👨🏽\u200D🚀',
      '☎\uFE0F',
      '❤\uFE0F\u200D🔥',
      '🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}',
    ]) {
      assert.equal(cleanFileName(`会议${emoji}.jpg`), `会议${emoji}.jpg`);
    }
    // An ideographic variation sequence chooses the glyph of a name's character.
    assert.equal(cleanFileName('葛\u{E0100}城.pdf'), '葛\u{E0100}城.pdf');
    // A joiner between letters is not part of an emoji.
    assert.equal(cleanText('a\u200Db'), 'ab');
  });

  it('shortens a long name to 200 characters, keeping the extension', () => {
    const cleaned = cleanFileName(`${'档'.repeat(1000)}.pdf`);
    assert.equal(Array.from(cleaned).length, MAX_FILE_NAME_LENGTH);
    assert.ok(cleaned.endsWith('.pdf'));
    assert.equal(Array.from(cleanFileName('x'.repeat(300))).length, MAX_FILE_NAME_LENGTH);
  });
});

describe('cleanUploadPath', () => {
  it('keeps the folders of a dropped folder, cleaned like names, and just the name without them', () => {
    assert.equal(cleanUploadPath('2026年移交/副本/第0012页.jpg'), '2026年移交/副本/第0012页.jpg');
    assert.equal(cleanUploadPath('第0012页.jpg'), '第0012页.jpg');
    assert.equal(cleanUploadPath('卷\u200B一\\扫描\\p1.tif'), '卷一/扫描/p1.tif');
  });

  it('never climbs out of the folder: no root, drive, empty, "." or ".." parts', () => {
    assert.equal(cleanUploadPath('/etc/../../a//./b/c.pdf'), 'etc/a/b/c.pdf');
    assert.equal(cleanUploadPath('C:\\x\\..\\c.pdf'), 'x/c.pdf');
    assert.equal(cleanUploadPath('../../'), '未命名');
  });

  it('keeps the folders nearest the file when the path is too long', () => {
    const path = cleanUploadPath(`${Array.from({ length: 20 }, (_, i) => `${i}${'档'.repeat(100)}`).join('/')}/p.pdf`);
    assert.ok(Array.from(path).length <= MAX_UPLOAD_PATH_LENGTH);
    assert.ok(path.startsWith('11') && path.endsWith('/19' + '档'.repeat(100) + '/p.pdf'), path.slice(0, 20));
  });
});

describe('cleanContentType', () => {
  it('keeps well-formed media types and drops parameters', () => {
    assert.equal(cleanContentType('application/pdf'), 'application/pdf');
    assert.equal(cleanContentType('Text/Plain; charset=GBK'), 'text/plain');
  });
  it('falls back to application/octet-stream for anything else', () => {
    for (const bad of [undefined, '', 'pdf', 'text/html\r\nSet-Cookie: x', 'a/b/c'])
      assert.equal(cleanContentType(bad), 'application/octet-stream');
  });
});
