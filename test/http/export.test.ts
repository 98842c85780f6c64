import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Response } from 'express';
import { EXPORT_BATCH_ROWS, streamCsv } from '../../server/http/export.js';

/** A table of `total` numbered rows, `batch` at a time, telling what the export asked of it. */
function numberedRows(total: number, batch: number, res: () => http.ServerResponse) {
  const seen = { batches: 0, pulledWhileClientBehind: 0, released: false };
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  async function* batches() {
    try {
      for (let offset = 0; offset < total; offset += batch) {
        // Asked for the next batch: the export must have handed the last one to the client first.
        if (res().writableNeedDrain) seen.pulledWhileClientBehind++;
        seen.batches++;
        yield { total, items: Array.from({ length: Math.min(batch, total - offset) }, (_, k) => offset + k) };
      }
    } finally {
      seen.released = true;
      release();
    }
  }
  return { batches: batches(), seen, released };
}

async function serve(handler: (res: http.ServerResponse) => void) {
  const server = http.createServer((_req, res) => handler(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('CSV exports', () => {
  it('stream every row to a slow client a batch at a time, leaving no listeners behind on the response', async () => {
    const batches = 12;
    const total = batches * EXPORT_BATCH_ROWS;
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let streamed: Promise<Record<string, number>> | undefined;
    let table: ReturnType<typeof numberedRows> | undefined;
    let fullWrites = 0;
    const { server, url } = await serve((res) => {
      table = numberedRows(total, EXPORT_BATCH_ROWS, () => res);
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        const ok = write(chunk);
        if (!ok) fullWrites++;
        return ok;
      }) as typeof res.write;
      streamed = streamCsv(res as unknown as Response, 'table', ['n', 'text'], table.batches, (n) => [
        n,
        'x'.repeat(200),
      ]).then(() => ({ close: res.listenerCount('close'), error: res.listenerCount('error') }));
    });
    try {
      const res = await fetch(url);
      assert.equal(res.headers.get('x-total-count'), String(total));
      // Read slowly, so the server waits for the client between batches.
      const reader = res.body!.getReader();
      let text = '';
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        text += decoder.decode(r.value, { stream: true });
        await delay(2);
      }
      const lines = text.split('\r\n').filter(Boolean);
      assert.equal(lines.length, total + 1, 'the header and every row');
      assert.deepEqual(
        lines.slice(1).map((l) => Number(l.split(',')[0])),
        Array.from({ length: total }, (_, k) => k),
        'every row once, in order',
      );
      await table!.released;
      assert.ok(fullWrites > 0, 'the client fell behind (a batch filled the socket)');
      assert.equal(table!.seen.batches, batches);
      assert.equal(table!.seen.pulledWhileClientBehind, 0, 'no batch read while the client had not taken the last');
      // Once the export has ended (the client has every row before the server is done with it)...
      const listeners = await streamed!;
      assert.ok(listeners.close! <= 2 && listeners.error! <= 2, `listeners left: ${JSON.stringify(listeners)}`);
      // ...and a warning it raised has been emitted (on a later tick).
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      server.close();
    }
  });

  it('let the server answer other requests between batches, however fast the client takes them', async () => {
    // Batches read at once (the embedded store's are) and a client that never falls behind: no
    // write waits, so only the export itself can give the event loop a turn.
    const batches = 50;
    let table: ReturnType<typeof numberedRows> | undefined;
    let batchesAtFirstTurn: number | undefined;
    let exported: Promise<void> | undefined;
    const { server, url } = await serve((res) => {
      table = numberedRows(batches * 10, 10, () => res);
      exported = streamCsv(res as unknown as Response, 'table', ['n'], table.batches, (n) => [n]);
      setImmediate(() => (batchesAtFirstTurn = table!.seen.batches));
    });
    try {
      const text = await (await fetch(url)).text();
      await exported;
      assert.equal(text.split('\r\n').filter(Boolean).length, batches * 10 + 1, 'the header and every row');
      assert.ok(
        batchesAtFirstTurn! <= 2,
        `the event loop turned first after ${batchesAtFirstTurn} of ${batches} batches`,
      );
    } finally {
      server.close();
    }
  });

  it('write a batch as pieces far below V8 large-object size, so that no written text outlives a young collection', async () => {
    const writes: number[] = [];
    let exported: Promise<void> | undefined;
    const { server, url } = await serve((res) => {
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        writes.push(chunk.length);
        return write(chunk);
      }) as typeof res.write;
      exported = streamCsv(
        res as unknown as Response,
        'table',
        ['n', 'text'],
        numberedRows(3 * EXPORT_BATCH_ROWS, EXPORT_BATCH_ROWS, () => res).batches,
        (n) => [n, '档'.repeat(200)],
      );
    });
    try {
      const text = await (await fetch(url)).text();
      await exported;
      assert.equal(text.split('\r\n').filter(Boolean).length, 3 * EXPORT_BATCH_ROWS + 1, 'the header and every row');
      // A batch is about 200,000 characters: one write of it would be one such string.
      assert.ok(writes.length > 3 * 10, `${writes.length} writes`);
      assert.ok(Math.max(...writes) <= 20_000, `the largest write held ${Math.max(...writes)} characters`);
    } finally {
      server.close();
    }
  });

  it(
    'let go of their rows when the client goes away half-way (the statement or cursor is closed)',
    { timeout: 60_000 },
    async () => {
      let table: ReturnType<typeof numberedRows> | undefined;
      let exported: Promise<void> | undefined;
      const { server, url } = await serve((res) => {
        table = numberedRows(1_000 * EXPORT_BATCH_ROWS, EXPORT_BATCH_ROWS, () => res);
        exported = streamCsv(res as unknown as Response, 'table', ['n', 'text'], table.batches, (n) => [
          n,
          'x'.repeat(200),
        ]);
      });
      try {
        const abort = new AbortController();
        const res = await fetch(url, { signal: abort.signal });
        const reader = res.body!.getReader();
        await reader.read();
        abort.abort();
        await table!.released;
        await exported;
        assert.ok(table!.seen.batches < 1_000, `read ${table!.seen.batches} of 1,000 batches`);
      } finally {
        server.close();
      }
    },
  );
});
