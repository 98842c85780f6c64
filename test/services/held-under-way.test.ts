import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heldUnderWay } from '../../server/services/holds.js';

interface Step {
  id: number;
  file: string;
}

/** Records under way, read three at a time after the last of the page before, as the stores page them. */
function underWay(records: readonly Step[]) {
  const reads: (number | undefined)[] = [];
  const page = (after: Step | undefined) => {
    reads.push(after?.id);
    return Promise.resolve(records.filter((r) => r.id > (after?.id ?? 0)).slice(0, 3));
  };
  return { page, reads };
}

describe('the records under way a new hold covers (each settling of a hold reads them so)', () => {
  const records: Step[] = [1, 2, 3, 4, 5, 6, 7].map((id) => ({ id, file: `f${id % 3}` }));

  it('yields, page by page, the records whose files the hold covers; a page of none yields nothing', async () => {
    const { page, reads } = underWay(records);
    const asked: string[][] = [];
    const covered = (files: readonly string[]) => {
      asked.push([...files]);
      return Promise.resolve(new Set(files.filter((f) => f === 'f1')));
    };
    const pages: number[][] = [];
    for await (const held of heldUnderWay(page, (r) => r.file, covered)) pages.push(held.map((r) => r.id));
    // Files f1: records 1, 4, 7, one on each page of three.
    assert.deepEqual(pages, [[1], [4], [7]]);
    // Each page's files asked about once, together; the next page read after the last record of the one before.
    assert.deepEqual(asked, [['f1', 'f2', 'f0'], ['f1', 'f2', 'f0'], ['f1']]);
    assert.deepEqual(reads, [undefined, 3, 6, 7]);
  });

  it('reads on past pages with nothing held, to the end', async () => {
    const { page, reads } = underWay(records);
    const none = () => Promise.resolve(new Set<string>());
    const pages: Step[][] = [];
    for await (const held of heldUnderWay(page, (r) => r.file, none)) pages.push(held);
    assert.deepEqual([pages, reads], [[], [undefined, 3, 6, 7]]);
  });

  it('reads the next page only once the caller has settled the one before', async () => {
    const { page, reads } = underWay(records);
    const all = (files: readonly string[]) => Promise.resolve(new Set(files));
    const seen: number[] = [];
    for await (const held of heldUnderWay(page, (r) => r.file, all)) {
      seen.push(reads.length);
      void held;
    }
    assert.deepEqual(seen, [1, 2, 3]);
  });
});
