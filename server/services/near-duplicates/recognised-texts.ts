import type { Compared } from './text-reader.js';

/**
 * The texts recognised in images lately, by file: a scan that is another file's candidate is
 * compared on its text, and reading it again would cost seconds of OCR a page, where a document's
 * text costs milliseconds. Bounded by the characters held (the least recently used go first);
 * what falls out is recognised again when needed.
 */
export class RecognisedTexts {
  private readonly texts = new Map<string, Compared>();
  private characters = 0;

  constructor(private readonly maxCharacters = 4_000_000) {}

  get(fileId: string): Compared | undefined {
    const text = this.texts.get(fileId);
    if (text) {
      this.texts.delete(fileId);
      this.texts.set(fileId, text); // most recently used last
    }
    return text;
  }

  set(fileId: string, text: Compared): void {
    if (size(text) > this.maxCharacters) return;
    this.forget(fileId);
    this.texts.set(fileId, text);
    this.characters += size(text);
    for (const [oldest, old] of this.texts) {
      if (this.characters <= this.maxCharacters) break;
      this.texts.delete(oldest);
      this.characters -= size(old);
    }
  }

  forget(fileId: string): void {
    const old = this.texts.get(fileId);
    if (!old) return;
    this.texts.delete(fileId);
    this.characters -= size(old);
  }
}

/** Characters held for a text: a multi-page scan holds each page's text as well as the whole. */
const size = (text: Compared) => text.text.length + (text.pageTexts?.reduce((n, p) => n + p.text.length, 0) ?? 0);
