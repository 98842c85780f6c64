import { Worker } from 'node:worker_threads';
import { BadRequestError, NotFoundError, RateLimitedError } from '../errors.js';

/**
 * A page asked of the drawing thread (pages count from 1), of the file `file` (its key): with its
 * bytes, or without when the thread keeps that file open from a page before.
 */
export interface PageAsked {
  id: number;
  file: string;
  bytes?: Uint8Array;
  page: number;
  width: number;
}
/** What the drawing thread answers, and which files it keeps open after (`kept`, their keys). */
export type PageAnswer = (
  | { id: number; kind: 'page'; jpeg: Uint8Array; pages: number }
  | { id: number; kind: 'missing'; pages: number }
  | { id: number; kind: 'unreadable'; reason: string }
  /** Asked without its bytes, a file the thread does not keep open. */
  | { id: number; kind: 'unopened' }
) & { kept: string[] };

/**
 * A file to draw a page of: its key (the same key, the same bytes: its id and content hash), its
 * name (for errors), length and bytes.
 */
export interface PagedFile {
  key: string;
  name: string;
  length: number;
  read(): AsyncIterable<unknown>;
}

/** A page drawn: a JPEG, and how many pages the file has. */
export interface DrawnPage {
  jpeg: Uint8Array;
  pages: number;
}

export interface PageImageLimits {
  /** Larger files are not drawn (they are downloaded): the whole file is read into memory. */
  maxBytes: number;
  /** Pages waiting to be drawn, beyond the one being drawn; more are refused for a moment (429). */
  maxWaiting: number;
  /** The thread, idle this long, ends (and PDFium's memory with it, and the files it keeps open). */
  idleMs: number;
  /** The files the thread keeps open after drawing a page, for the next page of the same file. */
  kept: KeptFiles;
}

/** At most `files` files, `bytes` together (their lengths: PDFium's copies of PDFs, images' bytes). */
export interface KeptFiles {
  files: number;
  bytes: number;
}

export const DEFAULT_PAGE_IMAGE_LIMITS: PageImageLimits = {
  maxBytes: 64 * 1024 * 1024,
  maxWaiting: 8,
  idleMs: 30_000,
  // A viewer or two paging through a file each; at most one largest file's worth of memory.
  kept: { files: 2, bytes: 64 * 1024 * 1024 },
};

/** Widths a page is drawn at: a thumbnail to a high-density screen's dialog. */
export const PAGE_WIDTHS = { min: 100, max: 1600 } as const;

/**
 * Draws the pages of PDFs and images (a multi-page TIFF page by page) as JPEGs, on the server:
 * the viewer of 本单位文件 shows these in every browser the county offices use (Chromium 86 and
 * 109 cannot run today's pdf.js; no browser shows a TIFF), and the reports use them as thumbnails.
 * One page at a time, on a thread of its own started when first needed and ended when idle. The
 * thread keeps the last files it drew from open (`kept`), so paging through a large scanned PDF
 * reads, sends and opens it once, not once a page.
 */
export class PageImages {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, { resolve: (answer: PageAnswer) => void; reject: (e: Error) => void }>();
  private queue: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private nextId = 1;
  private idle: NodeJS.Timeout | undefined;
  /** The files the thread keeps open, as its last answer said. */
  private kept = new Set<string>();
  private readonly limits: PageImageLimits;

  constructor(limits: Partial<PageImageLimits> = {}) {
    this.limits = { ...DEFAULT_PAGE_IMAGE_LIMITS, ...limits };
  }

  /** Page `page` (from 1) of a file, `width` pixels wide at most; the file is read only if it is drawn. */
  async draw(file: PagedFile, page: number, width: number): Promise<DrawnPage> {
    const name = file.name;
    if (file.length > this.limits.maxBytes)
      throw new BadRequestError(
        `"${name}" is too large to show here (${mib(file.length)} MiB; at most ${mib(this.limits.maxBytes)} MiB): download it instead.`,
      );
    if (this.queued > this.limits.maxWaiting)
      throw new RateLimitedError(2, 'Many pages are being drawn for viewing right now.');
    this.queued++;
    const turn = this.queue.then(() => this.pageOf(file, page, width));
    this.queue = turn.catch(() => {});
    let answer: Awaited<typeof turn>;
    try {
      answer = await turn;
    } finally {
      this.queued--;
    }
    if (answer.kind === 'missing')
      throw new NotFoundError(`"${name}" has ${answer.pages} page(s); page ${page} does not exist.`);
    if (answer.kind === 'unreadable')
      throw new BadRequestError(`"${name}" cannot be shown (${answer.reason}): download it instead.`);
    return { jpeg: answer.jpeg, pages: answer.pages };
  }

  async close(): Promise<void> {
    clearTimeout(this.idle);
    const worker = this.worker;
    this.worker = undefined;
    this.kept = new Set();
    for (const w of this.waiting.values()) w.reject(new Error('page drawing was stopped'));
    this.waiting.clear();
    await worker?.terminate();
  }

  /** The page drawn from the file the thread keeps open, or else from its bytes, read now. */
  private async pageOf(
    file: PagedFile,
    page: number,
    width: number,
  ): Promise<Exclude<PageAnswer, { kind: 'unopened' }>> {
    if (this.kept.has(file.key)) {
      const answer = await this.ask({ file: file.key, page, width });
      if (answer.kind !== 'unopened') return answer;
    }
    const answer = await this.ask({ file: file.key, bytes: await bytesOf(file), page, width });
    // Sent with its bytes, a file is opened (or unreadable): never asked for again.
    if (answer.kind === 'unopened') throw new Error(`the page drawing thread did not open "${file.name}"`);
    return answer;
  }

  private ask(asked: Omit<PageAsked, 'id'>): Promise<PageAnswer> {
    clearTimeout(this.idle);
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<PageAnswer>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, ...asked } satisfies PageAsked, asked.bytes ? [asked.bytes.buffer as ArrayBuffer] : []);
    });
  }

  private start(): Worker {
    const worker = new Worker(new URL('./page-images-thread.js', import.meta.url), { workerData: this.limits.kept });
    worker.unref(); // an idle thread keeps no one alive
    this.kept = new Set();
    worker.on('message', (answer: PageAnswer) => {
      if (this.worker === worker) this.kept = new Set(answer.kept);
      const waiting = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      waiting?.resolve(answer);
      if (this.waiting.size === 0) {
        this.idle = setTimeout(() => {
          if (this.worker === worker && this.waiting.size === 0) void this.close();
        }, this.limits.idleMs).unref();
      }
    });
    const lost = (error: Error) => {
      if (this.worker === worker) {
        this.worker = undefined;
        this.kept = new Set();
      }
      for (const w of this.waiting.values()) w.reject(error);
      this.waiting.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the page drawing thread ended (exit code ${code})`)));
    return worker;
  }
}

/** The whole file in one buffer of its own (the thread may take it over without a copy). */
async function bytesOf(file: PagedFile): Promise<Uint8Array> {
  const bytes = new Uint8Array(file.length);
  let at = 0;
  for await (const part of file.read()) {
    const chunk = part as Uint8Array;
    bytes.set(chunk.subarray(0, Math.max(0, file.length - at)), at);
    at += chunk.byteLength;
  }
  return at >= file.length ? bytes : bytes.subarray(0, at);
}

function mib(n: number): string {
  return (n / 1024 / 1024).toFixed(n % (1024 * 1024) === 0 ? 0 : 1);
}
