import type { CommitOutcome, ContentStore, StoredParts } from './port.js';

/** Contents of a batch staged and written at the same time (each its own staging area). */
const WRITES_AT_ONCE = 16;

/**
 * `storeMany` by way of staging areas: each content staged and written (WRITES_AT_ONCE at a time),
 * then all committed together; on failure the staged bytes are discarded (nothing resumes a batch).
 */
export async function storeByStaging(
  content: Pick<ContentStore, 'stage' | 'write' | 'commitMany' | 'discard'>,
  items: ReadonlyArray<StoredParts>,
  now: Date,
): Promise<CommitOutcome[]> {
  const stagingIds: string[] = [];
  try {
    let next = 0;
    const writers = Array.from({ length: Math.min(WRITES_AT_ONCE, items.length) }, async () => {
      while (next < items.length) {
        const k = next++;
        const { parts } = items[k]!;
        stagingIds[k] = await content.stage(now);
        await content.write(
          stagingIds[k],
          0,
          parts.filter((part) => part.byteLength > 0),
        );
      }
    });
    // Every writer settles before a failure is acted on: no write may land after its discard.
    const written = await Promise.allSettled(writers);
    const failed = written.find((w): w is PromiseRejectedResult => w.status === 'rejected');
    if (failed) throw failed.reason;
    return await content.commitMany(items.map(({ entry }, k) => ({ stagingId: stagingIds[k]!, entry })));
  } catch (err) {
    // A committed file is never discarded, so this is safe also after a partial commit.
    await Promise.all(stagingIds.filter(Boolean).map((id) => content.discard(id).catch(() => {})));
    throw err;
  }
}
