/** Where an upload list stands, as the page shows it. */
export interface ProgressState {
  /** Something is being checked or sent (paused work included). */
  active: boolean;
  total: number;
  /** Files with an outcome (failed ones included). */
  finished: number;
  /** Requests wait to be tried again (the archive does not answer). */
  waiting?: boolean;
}

/** The announcements, in the page's language. */
export interface ProgressWords {
  /** `total`: the whole list's files (some may have finished already: refused at once, held before). */
  start(total: number): string;
  progress(finished: number, total: number): string;
  end(): string;
  /** The archive does not answer; the page retries on its own (said once, not each second of its countdown). */
  waiting?(): string;
  /** It answers again. */
  recovered?(): string;
}

/** The least time between two progress announcements. */
export const ANNOUNCE_EVERY_MS = 5_000;
/** The least share of the list finished since the last progress announcement. */
export const ANNOUNCE_STEP = 0.1;

/**
 * What the upload page's live region says, and when. The page redraws four times a second while
 * files move; a screen reader must not hear each redraw. So the text changes when work starts
 * (files chosen, failures retried: `began`), then at most every ANNOUNCE_EVERY_MS and only once
 * another ANNOUNCE_STEP of the list has finished, and at once when the list has ended (its
 * summary). A list over before the page first redraws gets its summary alone. Each change is read
 * once, politely.
 */
export class ProgressAnnouncer {
  #text = '';
  #at = 0;
  #running = false;
  #starting = false;
  /** Files finished when progress was last told. */
  #told = 0;
  /** The outage was told and has not ended. */
  #waiting = false;

  constructor(
    private readonly everyMs = ANNOUNCE_EVERY_MS,
    private readonly step = ANNOUNCE_STEP,
  ) {}

  /** Work was asked for: the next text says so. */
  began(): void {
    this.#starting = true;
  }

  /** The live region's text for this state at `now` (ms): the last one, unless it is time for a new one. */
  say(state: ProgressState, words: ProgressWords, now: number): string {
    if (state.total === 0) {
      // Cleared (a new list may be on its way: `began` stays asked for).
      this.#running = false;
      return this.#set('', now);
    }
    // Ended, not merely waiting for its work to start (or stopped with files to drop again: the page's notice says so).
    const ended = !state.active && state.finished >= state.total;
    if (this.#starting) {
      this.#starting = false;
      this.#running = !ended;
      this.#told = state.finished;
      return this.#set(ended ? words.end() : words.start(state.total), now);
    }
    if (!this.#running) return this.#text;
    if (ended) {
      this.#running = false;
      this.#waiting = false;
      return this.#set(words.end(), now);
    }
    if (state.waiting && words.waiting) {
      this.#waiting = true;
      return this.#set(words.waiting(), now);
    }
    if (this.#waiting) {
      this.#waiting = false;
      this.#told = state.finished;
      return this.#set(words.recovered?.() ?? words.progress(state.finished, state.total), now);
    }
    const due = now - this.#at >= this.everyMs && state.finished - this.#told >= this.step * state.total;
    if (!due) return this.#text;
    this.#told = state.finished;
    return this.#set(words.progress(state.finished, state.total), now);
  }

  #set(text: string, now: number): string {
    if (text !== this.#text) {
      this.#text = text;
      this.#at = now;
    }
    return text;
  }
}
