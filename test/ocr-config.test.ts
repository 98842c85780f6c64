import assert from 'node:assert/strict';
import os from 'node:os';
import { describe, it } from 'node:test';
import { loadConfig } from '../server/config.js';

/** Whether an instance recognises images' text, and the heap of the process it reads documents in. */
describe('OCR and the text reading process, as configured', () => {
  it('recognise images in a reading process of 512 MB of heap unless set', () => {
    const defaults = loadConfig({});
    assert.deepEqual([defaults.ocr, defaults.textReaderHeapMb], [true, 512]);
    const web = loadConfig({ OCR: 'off', TEXT_READER_HEAP_MB: '256' });
    assert.deepEqual([web.ocr, web.textReaderHeapMb], [false, 256]);
  });

  it('recognise a page on the cores, two at most, unless set', () => {
    assert.equal(loadConfig({}).ocrThreads, Math.min(2, os.availableParallelism()));
    assert.equal(loadConfig({ OCR_THREADS: '4' }).ocrThreads, 4);
  });

  it('refuse what is neither on nor off, and a heap too small to read a page in', () => {
    for (const [name, value, words] of [
      ['OCR', 'false', /OCR is on \(images' text is recognised\) or off/],
      ['OCR', 'worker', /OCR is on/],
      ['TEXT_READER_HEAP_MB', '64', /at least 128 \(reading a scanned page needs about 200 MB of heap\)/],
      ['TEXT_READER_HEAP_MB', 'lots', /TEXT_READER_HEAP_MB/],
      ['OCR_THREADS', '0', /OCR_THREADS is at least 1/],
      ['OCR_THREADS', '1.5', /OCR_THREADS/],
    ] as const)
      assert.throws(
        () => loadConfig({ [name]: value }),
        (err: Error) => err.message.startsWith(`invalid setting ${name}:`) && words.test(err.message),
        `${name}=${value}`,
      );
  });
});
