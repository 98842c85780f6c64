import { Worker } from 'node:worker_threads';
import { extractText, textFormat } from './extraction.js';
import { Fingerprinter, type NearDuplicateSettings, type TextFingerprint } from './fingerprint.js';
import { type BetweenPages, imageFormat, PageRecogniser } from './ocr.js';

/** A document's text and fingerprint, with what is needed to compare it again. */
export interface Compared {
  text: string;
  format: string;
  fingerprint: TextFingerprint;
}

/** A document read for comparison: its text, or why it has none. */
export type Read = Compared | { skipped: string };

export interface DocumentFile {
  name: string;
  contentType: string;
}

/**
 * Reads documents' texts and fingerprints them; an image's text is recognised (OCR), one page at
 * a time, and `betweenPages` is awaited after each page but the last.
 */
export interface TextReader {
  read(bytes: Uint8Array, file: DocumentFile, betweenPages?: BetweenPages): Promise<Read>;
  close(): Promise<void>;
}

/** Reads on the calling thread (tests, tools). */
export class InProcessTextReader implements TextReader {
  constructor(
    private readonly fingerprinter: Promise<Fingerprinter>,
    private readonly recogniser = new PageRecogniser(),
  ) {}

  async read(bytes: Uint8Array, file: DocumentFile, betweenPages?: BetweenPages): Promise<Read> {
    const image = textFormat(file) ? undefined : imageFormat(file);
    const extracted = image
      ? await this.recogniser.recognise(bytes, image, betweenPages)
      : await extractText(bytes, file);
    if (extracted.status === 'skipped') return { skipped: extracted.reason };
    return {
      text: extracted.text,
      format: extracted.format,
      fingerprint: (await this.fingerprinter).fingerprint(extracted.text),
    };
  }

  async close(): Promise<void> {}
}

/** A request to the reading thread, and its answer (the shingles as a list: a Set would be cloned entry by entry all the same). */
export interface ReadRequest {
  id: number;
  bytes: Uint8Array;
  file: DocumentFile;
  /** The thread asks between pages (`PageDone`) and waits for a `GoOn`. */
  paced: boolean;
}
/** After a page of an image (not the last), before the next is read: how long the page took. */
export interface PageDone {
  id: number;
  pageMs: number;
}
/** The answer to a PageDone: read the next page, or give up the image with this error. */
export interface GoOn {
  id: number;
  go: true | { stop: string };
}
export type ReadReply =
  | { id: number; skipped: string }
  | { id: number; text: string; format: string; fingerprint: Omit<TextFingerprint, 'shingles'>; shingles: string[] }
  | { id: number; error: string };

/**
 * Reads on a thread of its own: extracting a long PDF and fingerprinting its text (a quarter of a
 * second for 1.3 million characters) would otherwise hold up every request the server is
 * answering. The thread is started when first needed and keeps the process alive only while a
 * read is under way; one that dies fails the reads it had, and the next read starts another.
 */
export class ThreadTextReader implements TextReader {
  private worker: Worker | undefined;
  private readonly pending = new Map<
    number,
    { resolve: (read: Read) => void; reject: (error: Error) => void; betweenPages?: BetweenPages }
  >();
  private nextId = 1;

  constructor(private readonly settings: Partial<NearDuplicateSettings>) {}

  read(bytes: Uint8Array, file: DocumentFile, betweenPages?: BetweenPages): Promise<Read> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<Read>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, betweenPages });
      worker.ref(); // a read under way keeps the process alive (an idle thread does not)
      // Moved, not copied, where the bytes own their whole buffer (a slice of a shared pool is copied).
      const own =
        bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
      worker.postMessage(
        { id, bytes, file, paced: betweenPages !== undefined } satisfies ReadRequest,
        own ? [bytes.buffer] : [],
      );
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = new Worker(new URL('./text-reader-thread.js', import.meta.url), { workerData: this.settings });
    worker.unref();
    worker.on('message', (reply: ReadReply | PageDone) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      if ('pageMs' in reply) {
        // The thread waits for the answer: the pause (or the stop) happens here, on this side.
        void Promise.resolve(waiting.betweenPages?.(reply.pageMs)).then(
          () => worker.postMessage({ id: reply.id, go: true } satisfies GoOn),
          (error: unknown) =>
            worker.postMessage({
              id: reply.id,
              go: { stop: (error as Error)?.message ?? String(error) },
            } satisfies GoOn),
        );
        return;
      }
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else if ('skipped' in reply) waiting.resolve({ skipped: reply.skipped });
      else
        waiting.resolve({
          text: reply.text,
          format: reply.format,
          fingerprint: { ...reply.fingerprint, shingles: new Set(reply.shingles) },
        });
    });
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the text reading thread stopped (exit code ${code})`)));
    return worker;
  }
}
