/** A point a request stops at once, when armed: the test waits for it to get there, then lets it go. */
export class PausePoint {
  private armed: { reach: () => void; released: Promise<void> } | undefined;

  arm(): { reached: Promise<void>; release: () => void } {
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (reach = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.armed = { reach, released };
    return { reached, release };
  }

  /** Not armed any more (a test that failed before its request got there leaves the next alone). */
  disarm(): void {
    this.armed = undefined;
  }

  async pass(): Promise<void> {
    const armed = this.armed;
    if (!armed) return;
    this.armed = undefined;
    armed.reach();
    await armed.released;
  }
}
