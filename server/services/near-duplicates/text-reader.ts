import { SearchTerms } from '../search-terms.js';
import { type ChildProcess, fork } from 'node:child_process';
import { extractText, textFormat } from './extraction.js';
import type { FingerprinterOnFirstUse, NearDuplicateSettings, TextFingerprint } from './fingerprint.js';
import { type BetweenPages, imageFormat, PageRecogniser } from './ocr.js';
import type { PageImage } from './page-image.js';

/** A document's text and fingerprint, with what is needed to compare it again. */
export interface Compared {
  text: string;
  format: string;
  fingerprint: TextFingerprint;
  /** Its text was recognised (OCR), all or in part: reading it again costs seconds a page. */
  recognised: boolean;
  /** An image's pages, each fingerprinted (none for other documents). */
  pageImages: PageImage[];
  /**
   * A scan of two or more pages: each page's text and fingerprint, in the order of `pageImages`
   * (its pages are compared one by one with another scan's: document-pairs.ts). Absent otherwise.
   */
  pageTexts?: PageText[];
  /**
   * Its words for search by content (search-terms.ts), cut here, where it was read: segmenting
   * loads jieba (60 MB) and the script tables, which the web server need not hold for uploads.
   */
  terms: string[];
}

/** One page of a multi-page scan: its text (recognised, or a PDF page's text layer) and its fingerprint. */
export interface PageText {
  text: string;
  fingerprint: TextFingerprint;
}

/** A document read for comparison: its text, or why it has none (an image without text keeps its pages' fingerprints). */
export type Read = Compared | { skipped: string; pageImages: PageImage[] };

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

/** Why an image has no text where OCR is off. */
export const OCR_OFF = 'text recognition (OCR) is off on this instance';

/**
 * Reads on the calling thread (the reading process, tests, tools); images' text is recognised
 * unless `recogniser` is null (OCR off: an image is then recorded as having no text, saying so).
 */
export class InProcessTextReader implements TextReader {
  constructor(
    private readonly fingerprinter: FingerprinterOnFirstUse,
    private readonly recogniser: PageRecogniser | null = new PageRecogniser(),
    private readonly searchTerms: SearchTerms = new SearchTerms(),
  ) {}

  async read(bytes: Uint8Array, file: DocumentFile, betweenPages?: BetweenPages): Promise<Read> {
    const image = textFormat(file) ? undefined : imageFormat(file);
    if (image && !this.recogniser) return { skipped: OCR_OFF, pageImages: [] };
    const recogniser = this.recogniser;
    const extracted = image
      ? await recogniser!.recognise(bytes, image, betweenPages)
      : await extractText(
          bytes,
          file,
          recogniser ? (pdf, pages) => recogniser.recognisePdfPages(pdf, pages, betweenPages) : undefined,
        );
    const pageImages = ('pageImages' in extracted && extracted.pageImages) || [];
    if (extracted.status === 'skipped') return { skipped: extracted.reason, pageImages };
    const fingerprinter = await this.fingerprinter.get();
    const pageTexts = ('pageTexts' in extracted && extracted.pageTexts) || [];
    return {
      text: extracted.text,
      format: extracted.format,
      fingerprint: fingerprinter.fingerprint(extracted.text),
      recognised: image !== undefined || ('recognised' in extracted && extracted.recognised === true),
      pageImages,
      // A single page is its whole text: only scans of several pages are compared page by page.
      ...(pageTexts.length > 1
        ? { pageTexts: pageTexts.map((text) => ({ text, fingerprint: fingerprinter.fingerprint(text) })) }
        : {}),
      terms: await this.searchTerms.ofText(extracted.text),
    };
  }

  async close(): Promise<void> {}
}

/** A request to the reading process, and its answer (the shingles as a list: a Set would be cloned entry by entry all the same). */
export interface ReadRequest {
  id: number;
  bytes: Uint8Array;
  file: DocumentFile;
  /** The process asks between pages (`PageDone`) and waits for a `GoOn`. */
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
  | { id: number; skipped: string; pageImages: PageImage[] }
  | {
      id: number;
      text: string;
      format: string;
      recognised: boolean;
      fingerprint: Omit<TextFingerprint, 'shingles'>;
      shingles: string[];
      pageImages: PageImage[];
      pageTexts?: Array<{ text: string; fingerprint: Omit<TextFingerprint, 'shingles'>; shingles: string[] }>;
      terms: string[];
    }
  | { id: number; error: string };

/** How the reading process is started. */
export interface ReadingProcessOptions {
  /** The near-duplicate thresholds its fingerprints are made with. */
  settings: Partial<NearDuplicateSettings>;
  /** Whether images' text is recognised (OCR). */
  ocr: boolean;
  /** Threads one page's recognition uses (onnxruntime's intra-op threads); 1 when not given. */
  ocrThreads?: number;
  /** Its V8 heap limit (--max-old-space-size), megabytes. */
  heapMb: number;
  /** A process idle this long ends (its memory goes back); the next read starts another. */
  idleMs?: number;
}

/** What the reading process is started with (its one argument, as JSON). */
export type ReadingProcessArgs = Pick<ReadingProcessOptions, 'settings' | 'ocr' | 'ocrThreads'>;

const DEFAULT_IDLE_MS = 60_000;

/**
 * The reading process's niceness: its CPU time goes to the web server first. At 10 Linux gives it
 * about a tenth of a core the server wants, and all of an idle one.
 */
export const READING_NICENESS = 10;

/**
 * Reads in a process of its own (text-reader-process.ts): OCR holds 0.8–1.4 GB while it reads a
 * page (onnxruntime's tensors), which must not count against the web server's memory, and a
 * process the kernel or V8 ends for want of memory takes only its reads with it. Extracting a
 * long PDF and fingerprinting its text also happen there, off the server's event loop. The
 * process is started when first needed, keeps the server alive only while a read is under way,
 * ends when idle for `idleMs`, and is killed by close(); one that dies fails the reads it had
 * (their jobs are retried), and the next read starts another.
 */
export class ProcessTextReader implements TextReader {
  private child: ChildProcess | undefined;
  private readonly pending = new Map<
    number,
    { resolve: (read: Read) => void; reject: (error: Error) => void; betweenPages?: BetweenPages }
  >();
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;

  constructor(private readonly options: ReadingProcessOptions) {}

  /** The reading process's id while one runs (tests look into it). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  read(bytes: Uint8Array, file: DocumentFile, betweenPages?: BetweenPages): Promise<Read> {
    clearTimeout(this.idle);
    const child = (this.child ??= this.start());
    const id = this.nextId++;
    return new Promise<Read>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, betweenPages });
      hold(child, true); // a read under way keeps the server alive (an idle process does not)
      child.send({ id, bytes, file, paced: betweenPages !== undefined } satisfies ReadRequest, (error) => {
        if (error) this.settle(id)?.reject(error);
      });
    });
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const child = this.child;
    this.child = undefined;
    for (const waiting of this.pending.values()) waiting.reject(new Error('the text reader was closed'));
    this.pending.clear();
    if (child) await ended(child);
  }

  /** The waiting read of this id, taken off the list; an idle process is let go. */
  private settle(id: number) {
    const waiting = this.pending.get(id);
    this.pending.delete(id);
    const child = this.child;
    if (this.pending.size === 0 && child) {
      hold(child, false);
      this.idle = setTimeout(() => {
        if (this.child === child && this.pending.size === 0) void this.close();
      }, this.options.idleMs ?? DEFAULT_IDLE_MS).unref();
    }
    return waiting;
  }

  private start(): ChildProcess {
    const args: ReadingProcessArgs = {
      settings: this.options.settings,
      ocr: this.options.ocr,
      ocrThreads: this.options.ocrThreads,
    };
    const child = fork(new URL('./text-reader-process.js', import.meta.url), [JSON.stringify(args)], {
      // Its own flags, not the server's (whose heap limit is for the server): the same source maps.
      execArgv: [
        ...process.execArgv.filter((flag) => flag === '--enable-source-maps'),
        `--max-old-space-size=${this.options.heapMb}`,
      ],
      serialization: 'advanced', // bytes as bytes, not JSON
    });
    hold(child, false);
    child.on('message', (reply: ReadReply | PageDone) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      if ('pageMs' in reply) {
        // The process waits for the answer: the pause (or the stop) happens here, on this side.
        // A process gone meanwhile is reported by its exit, not by this message's failure.
        const answer = (go: GoOn['go']) => child.connected && child.send({ id: reply.id, go } satisfies GoOn, () => {});
        void Promise.resolve(waiting.betweenPages?.(reply.pageMs)).then(
          () => answer(true),
          (error: unknown) => answer({ stop: (error as Error)?.message ?? String(error) }),
        );
        return;
      }
      this.settle(reply.id);
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else if ('skipped' in reply) waiting.resolve({ skipped: reply.skipped, pageImages: reply.pageImages });
      else
        waiting.resolve({
          text: reply.text,
          format: reply.format,
          recognised: reply.recognised,
          fingerprint: { ...reply.fingerprint, shingles: new Set(reply.shingles) },
          pageImages: reply.pageImages,
          ...(reply.pageTexts && {
            pageTexts: reply.pageTexts.map((p) => ({
              text: p.text,
              fingerprint: { ...p.fingerprint, shingles: new Set(p.shingles) },
            })),
          }),
          terms: reply.terms,
        });
    });
    const lost = (error: Error) => {
      if (this.child === child) this.child = undefined;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    child.on('error', lost);
    child.on('exit', (code, signal) => lost(new ReadingProcessEnded(code, signal)));
    return child;
  }
}

/** The reading process ended with reads under way: killed (the kernel's OOM killer sends SIGKILL), out of heap, or stopped. */
export class ReadingProcessEnded extends Error {
  constructor(code: number | null, signal: NodeJS.Signals | null) {
    const how = signal ? `signal ${signal}` : `exit code ${code}`;
    // V8 out of heap aborts (SIGABRT, or 134 through a shell); the kernel's OOM killer sends SIGKILL.
    const memory = signal === 'SIGKILL' || signal === 'SIGABRT' || code === 134 ? ' (out of memory?)' : '';
    super(`the text reading process ended: ${how}${memory}`);
  }
}

/** Whether the process (and its IPC channel) keeps the server's event loop alive. */
function hold(child: ChildProcess, yes: boolean): void {
  if (yes) {
    child.ref();
    child.channel?.ref();
  } else {
    child.unref();
    child.channel?.unref();
  }
}

/** Ends the process and waits until it has. */
function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL'); // it holds nothing to save: a read cut short is done again
  return exited;
}
