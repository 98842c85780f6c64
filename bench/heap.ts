import fs from 'node:fs';
import path from 'node:path';
import type { BenchServer } from './server.js';

/** The live heap in a V8 heap snapshot (taking one collects garbage first), by constructor name. */
export interface HeapCensus {
  totalMb: number;
  byName: Map<string, { count: number; bytes: number }>;
}

/**
 * Asks a server started with `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=<dir>` for a heap
 * snapshot and reads it. The server stops for a second or two while it writes: only for soak runs.
 */
export async function heapCensus(server: BenchServer, dir: string): Promise<HeapCensus> {
  const before = new Set(fs.readdirSync(dir));
  server.process.kill('SIGUSR2');
  let file: string | undefined;
  // A loaded machine writes a snapshot of a few dozen MB in minutes, not seconds.
  for (let waited = 0; !file && waited < 600_000; waited += 250) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const fresh = fs.readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // Written once its closing bracket is there (V8 writes it in pieces).
    if (fresh && fs.readFileSync(path.join(dir, fresh), 'utf8').trimEnd().endsWith('}')) file = fresh;
  }
  if (!file) throw new Error('the server wrote no heap snapshot within ten minutes');
  const snapshot = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  fs.rmSync(path.join(dir, file));
  const fields = snapshot.snapshot.meta.node_fields;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const types = snapshot.snapshot.meta.node_types[0];
  const byName = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) {
    const size = snapshot.nodes[i + sizeAt]!;
    total += size;
    const type = types[snapshot.nodes[i + typeAt]!]!;
    // Objects by constructor; strings, arrays, code and the rest by their kind.
    const name =
      type === 'object' || type === 'closure'
        ? `${type} ${snapshot.strings[snapshot.nodes[i + nameAt]!]}`
        : `(${type})`;
    const entry = byName.get(name) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += size;
    byName.set(name, entry);
  }
  return { totalMb: total / 1024 / 1024, byName };
}

/** What grew between two censuses, largest first. */
export function heapGrowth(
  first: HeapCensus,
  last: HeapCensus,
  top = 8,
): Array<{ name: string; count: number; kb: number }> {
  return [...last.byName]
    .map(([name, e]) => ({
      name,
      count: e.count - (first.byName.get(name)?.count ?? 0),
      kb: (e.bytes - (first.byName.get(name)?.bytes ?? 0)) / 1024,
    }))
    .sort((a, b) => b.kb - a.kb)
    .slice(0, top);
}
