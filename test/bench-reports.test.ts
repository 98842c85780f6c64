import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reportQueries, timeReportsPaired, type Pair, type TimedGet } from '../bench/reports.js';

type ReportSeed = Parameters<typeof timeReportsPaired>[2];
type BenchServer = Parameters<typeof timeReportsPaired>[0]['none'];

const seed = {
  city: '江城市',
  county: '东县',
  fileWord: '通知',
} as ReportSeed;

/** Only what the timing reads of a server: its peak RSS. */
const server = (peakRssMb: number) => ({ peakRssMb: () => peakRssMb }) as BenchServer;
const servers: Pair<BenchServer> = { none: server(100), withdrawn: server(110) };

/**
 * Two archives that answer every page in exactly the same time, on a machine whose load grows
 * with every request (each takes 2% longer than the one before), as the shared VM's drifts:
 * `calls` is the order the requests were sent in.
 */
function drifting(totals: { none: number; withdrawn: number }) {
  const calls: Array<{ side: 'none' | 'withdrawn'; path: string }> = [];
  const get =
    (side: 'none' | 'withdrawn'): TimedGet =>
    async (path) => {
      calls.push({ side, path });
      return { ms: 100 * 1.02 ** calls.length, total: totals[side] };
    };
  return { calls, gets: { none: get('none'), withdrawn: get('withdrawn') } };
}

describe('the reports bench compares 0% and 10% withdrawn request by request', () => {
  it('sends each query to one archive then the other, in turn (ABBA), after one unmeasured request each', async () => {
    const { calls, gets } = drifting({ none: 1000, withdrawn: 900 });
    const measured = await timeReportsPaired(servers, gets, seed, 4, 2);
    const first = reportQueries(seed)[0]!;
    assert.equal(first.label, 'repeat-uploaders');
    assert.deepEqual(
      calls.slice(0, 10).map((c) => c.side),
      // Warm-up (0%, 10%), then rounds: 0% 10%, 10% 0%, 0% 10%, 10% 0%.
      ['none', 'withdrawn', 'none', 'withdrawn', 'withdrawn', 'none', 'none', 'withdrawn', 'withdrawn', 'none'],
    );
    assert.equal(measured.length, reportQueries(seed).length);
    const csv = measured.find((q) => q.csv)!;
    assert.equal(csv.none.p99Ms, csv.none.maxMs);
    assert.deepEqual([csv.none.peakRssMb, csv.withdrawn.peakRssMb], [100, 110]);
  });

  it('sets a deep page half-way through each archive’s own total', async () => {
    const { calls, gets } = drifting({ none: 1000, withdrawn: 900 });
    await timeReportsPaired(servers, gets, seed, 2, 1);
    const deep = reportQueries(seed).find((q) => q.deep)!;
    const sent = (side: 'none' | 'withdrawn') =>
      new Set(
        calls
          .filter((c) => c.side === side && (c.path === deep.path || c.path.startsWith(`${deep.path}offset=`)))
          .map((c) => c.path),
      );
    assert.deepEqual([...sent('none')], [deep.path, `${deep.path}offset=500`]);
    assert.deepEqual([...sent('withdrawn')], [deep.path, `${deep.path}offset=450`]);
  });

  it('gives the same time to two equal archives while the load grows', async () => {
    const { gets } = drifting({ none: 1000, withdrawn: 1000 });
    const measured = await timeReportsPaired(servers, gets, seed, 15, 3);
    for (const q of measured) {
      // Measured one after the other, the second would be 1.02^15 = 1.35x the first or more.
      assert.ok(
        Math.abs(q.withdrawn.p50Ms / q.none.p50Ms - 1) < 0.03,
        `${q.label}: ${q.withdrawn.p50Ms} / ${q.none.p50Ms}`,
      );
      assert.ok(Math.abs(q.pairedRatio - 1) < 0.03, `${q.label}: paired ${q.pairedRatio}`);
    }
  });
});
