import type { Body, Meta, State, Uppy } from '@uppy/core';
import GoldenRetriever from '@uppy/golden-retriever';

type StateUpdate<M extends Meta, B extends Body> = (
  prev: State<M, B>,
  next: State<M, B>,
  patch: Partial<State<M, B>> | undefined,
) => void;

/**
 * Golden Retriever (restores files and uploads after a reload or crash), with its state listener
 * coalesced: it copies every file's state on each update, so a thousand-file batch, with several
 * updates per file, spent most of the page's time there and froze it for seconds. Given the
 * first and the last state of an interval, it stores the same result. What is at most one
 * interval old may be lost in a crash; the upload URLs themselves are also kept by content in
 * the resume index, written at once.
 */
export function useGoldenRetriever<M extends Meta, B extends Body>(uppy: Uppy<M, B>, intervalMs = 400): () => void {
  const listeners: StateUpdate<M, B>[] = [];
  const patched = uppy as unknown as { on?: (event: string, fn: unknown) => unknown };
  const realOn = uppy.on.bind(uppy) as (event: string, fn: unknown) => unknown;
  patched.on = (event, fn) =>
    event === 'state-update' ? (listeners.push(fn as StateUpdate<M, B>), uppy) : realOn(event, fn);
  try {
    uppy.use(GoldenRetriever);
  } finally {
    delete patched.on;
  }

  let first: State<M, B> | undefined;
  let last: State<M, B> | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    if (!first || !last) return;
    let prev = first;
    const next = last;
    first = last = undefined;
    // A file added and finished within one interval must look finished, not newly added, or its
    // bytes would be kept for restoring (and never removed).
    const finishedUnseen = Object.values(next.files).filter((f) => !prev.files[f.id] && f.progress.uploadComplete);
    if (finishedUnseen.length > 0) {
      const files = { ...prev.files };
      for (const f of finishedUnseen)
        files[f.id] = {
          ...f,
          progress: { ...f.progress, uploadComplete: false, complete: false } as unknown as typeof f.progress,
        };
      prev = { ...prev, files };
    }
    for (const listener of listeners) listener(prev, next, undefined);
  };
  uppy.on('state-update', (prev, next) => {
    first ??= prev;
    last = next;
    timer ??= setTimeout(flush, intervalMs);
  });
  addEventListener('pagehide', flush);
  return () => {
    flush();
    removeEventListener('pagehide', flush);
  };
}
