import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cleanContentType, cleanFileName, MAX_FILE_NAME_LENGTH } from '../../shared/file-name.js';

describe('cleanFileName', () => {
  it('keeps Chinese and other printable names exactly', () => {
    for (const name of ['青县档案局 2024 第3号.pdf', 'Überweisung (1).docx', 'a b  c.txt', '50%.pdf']) assert.equal(cleanFileName(name), name);
  });

  it('drops directories sent by browsers and scripts', () => {
    assert.equal(cleanFileName('../../etc/passwd'), 'passwd');
    assert.equal(cleanFileName('C:\\Users\\clerk\\报告.docx'), '报告.docx');
    assert.equal(cleanFileName('folder/'), 'unnamed');
    assert.equal(cleanFileName('..'), 'unnamed');
  });

  it('removes NUL, control and bidirectional-override characters', () => {
    assert.equal(cleanFileName('a\u0000b\u0007c\u007f.txt'), 'abc.txt');
    assert.equal(cleanFileName('invoice\u202Efdp.exe'), 'invoicefdp.exe');
    assert.equal(cleanFileName('\u2066x\u2069\u200F.pdf'), 'x.pdf');
    assert.equal(cleanFileName('\u0000'), 'unnamed');
  });

  it('shortens a long name to 200 characters, keeping the extension', () => {
    const cleaned = cleanFileName(`${'档'.repeat(1000)}.pdf`);
    assert.equal(Array.from(cleaned).length, MAX_FILE_NAME_LENGTH);
    assert.ok(cleaned.endsWith('.pdf'));
    assert.equal(Array.from(cleanFileName('x'.repeat(300))).length, MAX_FILE_NAME_LENGTH);
  });
});

describe('cleanContentType', () => {
  it('keeps well-formed media types and drops parameters', () => {
    assert.equal(cleanContentType('application/pdf'), 'application/pdf');
    assert.equal(cleanContentType('Text/Plain; charset=GBK'), 'text/plain');
  });
  it('falls back to application/octet-stream for anything else', () => {
    for (const bad of [undefined, '', 'pdf', 'text/html\r\nSet-Cookie: x', 'a/b/c']) assert.equal(cleanContentType(bad), 'application/octet-stream');
  });
});
