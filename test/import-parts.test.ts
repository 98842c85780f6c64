import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ImportJournal } from '../client/importer/journal.js';
import { ProgressBars } from '../client/importer/progress.js';
import type { ImportItem } from '../client/importer/sources.js';
import { tempDir } from './support/stores.js';

describe('the importer journal', () => {
  const dir = tempDir('archive-journal-');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const item = (label: string, over: Partial<ImportItem> = {}): ImportItem => ({
    label,
    key: label,
    fsPath: `/x/${label}`,
    name: label,
    size: 10,
    mtimeMs: 1000,
    ino: 7,
    ...over,
  });
  const hashes = { md5: 'a'.repeat(32), sha256: 'b'.repeat(64) };
  /** What the journal records of a file as `item` describes it. */
  const seen = (key: string) => ({ key, size: 10, mtimeMs: 1000, ino: 7, ...hashes });

  it('knows finished files after a reopen, ignores a line torn by a kill, and keeps appending whole lines', () => {
    const file = path.join(dir, 'torn.jsonl');
    const first = ImportJournal.open(file);
    first.write({ ...seen('a.pdf'), state: 'done', as: 'uploaded', fileId: 'f'.repeat(24) });
    first.close();
    fs.appendFileSync(file, '{"key":"b.pdf","size":10,"mti'); // killed mid-write
    const second = ImportJournal.open(file);
    assert.equal(second.find(item('a.pdf'))?.state, 'done');
    assert.equal(second.find(item('b.pdf')), undefined, 'the torn record counts as never written');
    second.write({ ...seen('b.pdf'), state: 'sending', url: 'http://127.0.0.1/api/tus/1' });
    second.close();
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    assert.equal(JSON.parse(lines[2]!).state, 'sending', 'the next record starts a line of its own');
    assert.equal(ImportJournal.open(file).find(item('b.pdf'))?.state, 'sending');
  });

  it('forgets a file whose size, modification time or inode changed since it was recorded', () => {
    const journal = ImportJournal.open(path.join(dir, 'changed.jsonl'));
    journal.write({ ...seen('a.pdf'), state: 'done', as: 'instant', fileId: 'f'.repeat(24) });
    assert.ok(journal.find(item('a.pdf')));
    assert.equal(journal.find(item('a.pdf', { size: 11 })), undefined);
    assert.equal(journal.find(item('a.pdf', { mtimeMs: 2000 })), undefined);
    assert.equal(journal.find(item('a.pdf', { ino: 8 })), undefined);
    journal.close();
  });
});

describe('the importer progress bars', () => {
  it('redraw files, bytes, duplicates, errors, throughput and time left in place, with notes above them', () => {
    let written = '';
    const out = { columns: 200, write: (text: string) => ((written += text), true) } as unknown as NodeJS.WriteStream;
    const state = {
      filesTotal: 10,
      bytesTotal: 4096,
      filesDone: 5,
      bytesDone: 2048,
      bytesHashed: 3072,
      bytesSent: 1024,
      duplicates: 3,
      errors: 1,
    };
    let now = 0;
    const bars = new ProgressBars(
      out,
      () => state,
      () => now,
    );
    now = 2000;
    bars.draw();
    const [files, bytes] = written.trimEnd().split('\n');
    assert.match(files!, /^files ▕█{12}░{12}▏ {2}50% 5\/10 {2}duplicates 3 {2}errors 1$/);
    assert.match(
      bytes!,
      /^bytes ▕█{12}░{12}▏ {2}50% 2\.0 KB\/4\.0 KB {2}hashed 3\.0 KB {2}sent 1\.0 KB {2}1\.0 KB\/s {2}about 2 s left$/,
      '2 KB in 2 s: 1 KB/s, 2 KB to go',
    );
    written = '';
    bars.note('error: a.pdf: permission denied');
    assert.ok(written.startsWith('\x1b[1A\x1b[2K\x1b[1A\x1b[2Kerror: a.pdf'), 'the bars are erased before the note');
    written = '';
    state.filesDone = 10;
    state.bytesDone = 4096;
    bars.draw();
    assert.ok(!written.startsWith('\x1b[1A'), 'a note leaves nothing to erase');
    assert.match(written, /100% 10\/10 .*\n.*done\n$/);
  });
});
