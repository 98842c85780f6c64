import { ApiError } from './errors.js';

/** A new Idempotency-Key: random, and made in any page (crypto.randomUUID needs HTTPS or localhost, and Chromium 92). */
export function newRequestKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * The Idempotency-Key of an action a page may send again: the same key while the same request is
 * sent again (its answer lost on the way: the server then answers what it did the first time, and
 * does it once), a new key for any other request and after an answer. The server refuses a key sent
 * with a different request, so a changed request never reuses one.
 */
export class RetryKey {
  #sent: { request: string; key: string } | null = null;

  /** The key to send `request` with. */
  for(request: unknown): string {
    const text = JSON.stringify(request);
    if (this.#sent?.request !== text) this.#sent = { request: text, key: newRequestKey() };
    return this.#sent.key;
  }

  /** The server answered (done or refused): the next request is a new one. */
  answered(): void {
    this.#sent = null;
  }
}

/**
 * `sent`'s answer; the key is `answered` once the server has answered it for good: done, or
 * refused (4xx). After a lost answer or a server error it is kept: the hold may have been done.
 */
export async function answered<T>(key: RetryKey, sent: Promise<T>): Promise<T> {
  try {
    const answer = await sent;
    key.answered();
    return answer;
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) key.answered();
    throw error;
  }
}
