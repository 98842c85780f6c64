/** What the clerk chose for files it had uploaded into its unit before: skip them (the default) or count them again. */
export type RepeatChoice = 'skip' | 'count';

/**
 * The one question a drop asks: "其中 N 个文件本单位已于 … 上传过：跳过这些 / 仍要再次登记".
 * Each file of the drop joins when it starts and settles once the archive has answered its check
 * (or it ended before that); a file the archive knows this clerk sent into its unit before waits
 * for the answer instead. The question opens when every file of the drop is settled or waiting, so
 * it is asked once, with the whole count and the latest earlier upload; files that ask after it was
 * answered (a retried one) take the same answer at once.
 */
export class RepeatQuestion {
  readonly #unsettled = new Set<object>();
  readonly #waiting: Array<(choice: RepeatChoice) => void> = [];
  #count = 0;
  #latest = '';
  #choice: RepeatChoice | undefined;

  constructor(private readonly onChange: () => void) {}

  /** A file of the drop started: the question waits for its check. */
  join(file: object): void {
    if (this.#choice === undefined) this.#unsettled.add(file);
  }

  /** The file is not one sent before, or it ended another way. */
  settle(file: object): void {
    if (this.#unsettled.delete(file)) this.onChange();
  }

  /** The answer, once given. */
  get choice(): RepeatChoice | undefined {
    return this.#choice;
  }

  /** The clerk's answer for a file sent into this unit before (ISO 8601 `lastUploadTime`). */
  ask(file: object, lastUploadTime: string): Promise<RepeatChoice> {
    this.#unsettled.delete(file);
    if (this.#choice !== undefined) return Promise.resolve(this.#choice);
    this.#count++;
    // ISO 8601 times of one server compare as text.
    if (lastUploadTime > this.#latest) this.#latest = lastUploadTime;
    const answered = new Promise<RepeatChoice>((resolve) => this.#waiting.push(resolve));
    this.onChange();
    return answered;
  }

  /** Whether the question is to be shown: every file of the drop has been checked, and some wait. */
  get open(): boolean {
    return this.#choice === undefined && this.#waiting.length > 0 && this.#unsettled.size === 0;
  }

  /** Files waiting for the answer. */
  get count(): number {
    return this.#count;
  }

  /** The latest earlier upload among them (ISO 8601). */
  get latest(): string {
    return this.#latest;
  }

  answer(choice: RepeatChoice): void {
    if (this.#choice !== undefined) return;
    this.#choice = choice;
    this.#unsettled.clear();
    for (const resolve of this.#waiting.splice(0)) resolve(choice);
    this.onChange();
  }
}
