/**
 * Where each unfinished upload lives on the server, keyed by the file's content (MD5, SHA-256,
 * size) and the account, so re-selecting the same document from any folder, after a reload or
 * a crash, resumes it from the server's offset instead of starting again.
 */
export interface ContentKey {
  md5: string;
  sha256: string;
  size: number;
}

interface Entry {
  url: string;
  savedAt: number;
}

/** The server forgets idle uploads after a day by default; a week covers a custom setting. */
const MAX_AGE_MS = 7 * 24 * 3600_000;

export class ResumeIndex {
  readonly #storageKey: string;

  constructor(
    accountId: string,
    private readonly storage: Storage = localStorage,
  ) {
    this.#storageKey = `archive.resume.${accountId}`;
  }

  static keyOf(content: ContentKey): string {
    return `${content.md5}:${content.sha256}:${content.size}`;
  }

  get(content: ContentKey): string | undefined {
    return this.#load()[ResumeIndex.keyOf(content)]?.url;
  }

  set(content: ContentKey, url: string): void {
    const entries = this.#load();
    const key = ResumeIndex.keyOf(content);
    if (entries[key]?.url === url) return;
    entries[key] = { url, savedAt: Date.now() };
    this.#save(entries);
  }

  delete(content: ContentKey): void {
    const entries = this.#load();
    if (!(ResumeIndex.keyOf(content) in entries)) return;
    delete entries[ResumeIndex.keyOf(content)];
    this.#save(entries);
  }

  #load(): Record<string, Entry> {
    try {
      const parsed: unknown = JSON.parse(this.storage.getItem(this.#storageKey) ?? '{}');
      if (typeof parsed !== 'object' || parsed === null) return {};
      const now = Date.now();
      return Object.fromEntries(
        Object.entries(parsed as Record<string, Entry>).filter(
          ([, e]) => typeof e?.url === 'string' && now - e.savedAt < MAX_AGE_MS,
        ),
      );
    } catch {
      return {};
    }
  }

  #save(entries: Record<string, Entry>): void {
    try {
      this.storage.setItem(this.#storageKey, JSON.stringify(entries));
    } catch {
      // A full storage only costs the ability to resume; the upload itself goes on.
    }
  }
}
