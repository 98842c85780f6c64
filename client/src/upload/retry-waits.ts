/**
 * Why a request waits before it is tried again: `offline`, the archive could not be reached (no
 * answer, or a proxy's 502 or 504); `busy`, it answered but asked for patience (429, 503, 423) or failed (5xx).
 */
export type WaitCause = 'offline' | 'busy';

/** What ended a sleep: its timer, the clerk (立即重试), or an answer the archive gave another request. */
export type WokenBy = 'timer' | 'clerk' | 'answer';

/** The cause of a failed request's wait, from its HTTP status (0: no answer). */
export function waitCause(status: number): WaitCause {
  return status === 0 || status === 502 || status === 504 ? 'offline' : 'busy';
}

/** What the page shows while requests wait to be tried again. */
export interface WaitingState {
  /** 'offline' when any waiting request got no answer. */
  cause: WaitCause;
  /** When the next try goes (ms since the epoch); undefined while every waiting request is being tried. */
  retryAt: number | undefined;
}

/** The files a failed request was for: marked while it waits (等待重试). */
export interface Waiter {
  retrying?: boolean;
}

/**
 * One failed request between its first failure and its end (answered, or given up): its files
 * are marked, and while it sleeps before its next try it can be woken.
 */
export class RetryWait {
  cause: WaitCause = 'offline';
  retryAt: number | undefined;
  #wake: ((by: WokenBy) => void) | undefined;

  constructor(
    private readonly owner: RetryWaits,
    readonly items: readonly Waiter[],
  ) {}

  /**
   * The request's next try goes in `ms` by someone else's timer (tus-js-client's); `wake` starts it at
   * once. Cleared by `trying()` when the try goes.
   */
  holding(ms: number, cause: WaitCause, wake: (by: WokenBy) => void): void {
    this.cause = cause;
    this.retryAt = Date.now() + ms;
    this.#wake = wake;
    this.owner.changed();
  }

  /** Sleeps `ms` before the next try; says what woke it. */
  sleep(ms: number, cause: WaitCause): Promise<WokenBy> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.trying();
        resolve('timer');
      }, ms);
      this.holding(ms, cause, (by) => {
        clearTimeout(timer);
        resolve(by);
      });
    });
  }

  /** The next try is on its way. */
  trying(): void {
    if (this.retryAt === undefined) return;
    this.retryAt = undefined;
    this.#wake = undefined;
    this.owner.changed();
  }

  /** Tries at once, if it sleeps. */
  wake(by: WokenBy): void {
    const wake = this.#wake;
    this.trying();
    wake?.(by);
  }

  /** Answered or given up: its files are no longer marked. */
  end(): void {
    this.owner.ended(this);
  }
}

/**
 * The requests of an upload that failed and wait to be tried again, as one state the page can
 * show (与档案库的连接中断，N 秒后自动重试). The retry loops stay where they are (the batches' in
 * FolderUpload, tus-js-client's for large files); they tell this registry when they wait, and it
 * can wake them: the clerk's 立即重试, or any request answered after an outage (the archive is back,
 * so requests still sleeping need not wait out their delays).
 */
export class RetryWaits {
  readonly #waits = new Set<RetryWait>();

  constructor(private readonly onChange: () => void) {}

  /** A request for `items` failed and will be tried again. */
  begin(items: readonly Waiter[]): RetryWait {
    const wait = new RetryWait(this, items);
    this.#waits.add(wait);
    for (const item of items) item.retrying = true;
    return wait;
  }

  /** 立即重试: every sleeping request goes now. */
  retryNow(): void {
    for (const wait of [...this.#waits]) wait.wake('clerk');
  }

  /** The archive answered a request: those that could not reach it go now. */
  answered(): void {
    for (const wait of [...this.#waits]) if (wait.cause === 'offline') wait.wake('answer');
  }

  /** Undefined when nothing waits. */
  get state(): WaitingState | undefined {
    if (this.#waits.size === 0) return undefined;
    let cause: WaitCause = 'busy';
    let retryAt: number | undefined;
    for (const wait of this.#waits) {
      if (wait.cause === 'offline') cause = 'offline';
      if (wait.retryAt !== undefined && (retryAt === undefined || wait.retryAt < retryAt)) retryAt = wait.retryAt;
    }
    return { cause, retryAt };
  }

  /** @internal */
  ended(wait: RetryWait): void {
    if (!this.#waits.delete(wait)) return;
    wait.trying();
    for (const item of wait.items) item.retrying = false;
    this.onChange();
  }

  /** @internal */
  changed(): void {
    this.onChange();
  }
}
