export interface BatcherOptions<In, Out> {
  /** A batch goes once it holds this many items... */
  maxItems: number;
  /** ...or this many bytes (by `sizeOf`)... */
  maxBytes?: number;
  sizeOf?: (item: In) => number;
  /** ...or once its first item has waited this long (but see `fillWhileBusy`). */
  waitMs: number;
  /** Batches on their way at once; full batches wait their turn. */
  concurrency: number;
  /**
   * A batch that has waited its time goes on filling while `concurrency` batches are on their way,
   * and goes when one returns: batches grow as the archive slows down. For a sender whose cost is
   * the archive's work per request (the importer); the browser's page keeps small batches, whose
   * answers it handles in short tasks.
   */
  fillWhileBusy?: boolean;
  /**
   * Sends one batch: an answer (or an Error) per item, in order. A throw fails every item of the
   * batch with it.
   */
  send: (items: In[]) => Promise<Array<Out | Error>>;
}

interface Waiting<In, Out> {
  item: In;
  resolve: (out: Out) => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers one-at-a-time requests into batches, so thousands of small files cost the archive a
 * few dozen requests instead of thousands. Each caller still gets its own answer.
 */
export class RequestBatcher<In, Out> {
  #filling: Array<Waiting<In, Out>> = [];
  #fillingBytes = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** The filling batch has waited long enough: it goes as soon as a batch may. */
  #due = false;
  readonly #ready: Array<Array<Waiting<In, Out>>> = [];
  #inFlight = 0;
  #closed: Error | undefined;

  constructor(private readonly options: BatcherOptions<In, Out>) {}

  add(item: In): Promise<Out> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise<Out>((resolve, reject) => {
      this.#filling.push({ item, resolve, reject });
      this.#fillingBytes += this.options.sizeOf?.(item) ?? 0;
      if (
        this.#filling.length >= this.options.maxItems ||
        (this.options.maxBytes !== undefined && this.#fillingBytes >= this.options.maxBytes)
      )
        this.#seal();
      else if (!this.#due)
        this.#timer ??= setTimeout(() => {
          this.#timer = undefined;
          this.#due = true;
          this.#sealIfFree();
        }, this.options.waitMs);
    });
  }

  /**
   * Sends nothing more: items not yet on their way fail with `reason`; batches on their way end
   * as they will (cutting one off could leave the archive's answer unheard).
   */
  close(reason: Error): void {
    this.#closed = reason;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due = false;
    for (const waiting of [this.#filling, ...this.#ready.splice(0)].flat()) waiting.reject(reason);
    this.#filling = [];
    this.#fillingBytes = 0;
  }

  /**
   * Sends the filling batch if one may go now. Sealed on a timer while every slot is taken, it
   * would wait as a small batch behind the others; left open, it takes what arrives meanwhile
   * (the import bench's 8,000 new files went in 118 batches of 8 MiB at most, not about 900).
   */
  #sealIfFree(): void {
    if (this.#due && (!this.options.fillWhileBusy || this.#inFlight + this.#ready.length < this.options.concurrency))
      this.#seal();
  }

  #seal(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due = false;
    if (this.#filling.length === 0) return;
    this.#ready.push(this.#filling);
    this.#filling = [];
    this.#fillingBytes = 0;
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight < this.options.concurrency && this.#ready.length > 0) {
      const batch = this.#ready.shift()!;
      this.#inFlight++;
      void this.#sendBatch(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
        this.#sealIfFree();
      });
    }
  }

  async #sendBatch(batch: Array<Waiting<In, Out>>): Promise<void> {
    let answers: Array<Out | Error>;
    try {
      answers = await this.options.send(batch.map((w) => w.item));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      const answer = answers[i];
      if (answer instanceof Error) w.reject(answer);
      else if (answer === undefined) w.reject(new Error('the archive answered fewer items than the batch held'));
      else w.resolve(answer);
    });
  }
}
