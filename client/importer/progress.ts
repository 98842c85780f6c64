import { formatBytes } from './import-report.js';

/** Where an import stands, for the progress display. */
export interface ImportProgress {
  filesTotal: number;
  bytesTotal: number;
  /** Files that reached their end (any outcome). */
  filesDone: number;
  /** Bytes of finished files, plus what in-flight uploads have sent. */
  bytesDone: number;
  bytesHashed: number;
  bytesSent: number;
  duplicates: number;
  errors: number;
}

const WIDTH = 24;

function bar(part: number, whole: number): string {
  const ratio = whole === 0 ? 1 : Math.min(1, part / whole);
  const filled = Math.round(ratio * WIDTH);
  return `▕${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}▏ ${String(Math.floor(ratio * 100)).padStart(3)}%`;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '…';
  if (seconds < 90) return `${Math.ceil(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** Two lines redrawn in place on a terminal: files, bytes, duplicates, throughput, time left. */
export class ProgressBars {
  #timer: NodeJS.Timeout | undefined;
  #drawn = 0;
  readonly #started: number;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly state: () => ImportProgress,
    private readonly clock: () => number = Date.now,
  ) {
    this.#started = clock();
  }

  start(): void {
    this.#timer = setInterval(() => this.draw(), 250);
    this.#timer.unref();
  }

  draw(): void {
    const s = this.state();
    const seconds = (this.clock() - this.#started) / 1000;
    const rate = seconds > 0 ? s.bytesDone / seconds : 0;
    const left = rate > 0 ? (s.bytesTotal - s.bytesDone) / rate : Infinity;
    const lines = [
      `files ${bar(s.filesDone, s.filesTotal)} ${s.filesDone}/${s.filesTotal}  duplicates ${s.duplicates}  errors ${s.errors}`,
      `bytes ${bar(s.bytesDone, s.bytesTotal)} ${formatBytes(s.bytesDone)}/${formatBytes(s.bytesTotal)}  hashed ${formatBytes(s.bytesHashed)}  sent ${formatBytes(s.bytesSent)}  ${formatBytes(rate)}/s  ${s.filesDone === s.filesTotal ? 'done' : `about ${duration(left)} left`}`,
    ];
    this.out.write(
      `${this.#clear()}${lines.map((l) => l.slice(0, Math.max(20, (this.out.columns ?? 120) - 1))).join('\n')}\n`,
    );
    this.#drawn = lines.length;
  }

  /** Prints a line above the bars (an error as it happens). */
  note(line: string): void {
    this.out.write(`${this.#clear()}${line}\n`);
    this.#drawn = 0;
  }

  stop(): void {
    clearInterval(this.#timer);
    this.draw();
  }

  #clear(): string {
    return '\x1b[1A\x1b[2K'.repeat(this.#drawn);
  }
}
