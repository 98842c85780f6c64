/**
 * A long loop's way of sharing the event loop: it works for a few milliseconds, then lets I/O
 * and timers run (setImmediate) before going on. The embedded store answers synchronously, so
 * without this a batch of a thousand files would hold every other request until it is done.
 */
export class TimeSlice {
  private started = performance.now();

  constructor(private readonly budgetMs = 3) {}

  /** Gives the event loop back once this slice's budget is spent; costs nothing before. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < this.budgetMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.started = performance.now();
  }
}
