import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Response } from 'express';
import { EXPORT_PAGE_ROWS, streamCsv } from '../../server/http/export.js';

describe('CSV exports', () => {
  it('stream every row to a slow client a page at a time, leaving no listeners behind on the response', async () => {
    const pages = 12;
    const total = pages * EXPORT_PAGE_ROWS;
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    let listeners: Record<string, number> = {};
    const server = http.createServer((_req, res) => {
      void streamCsv(
        res as unknown as Response,
        'table',
        ['n', 'text'],
        async (offset, limit) => ({
          total,
          items: Array.from({ length: Math.max(0, Math.min(limit, total - offset)) }, (_, k) => offset + k),
        }),
        (n) => [n, 'x'.repeat(200)],
      ).then(() => {
        listeners = { close: res.listenerCount('close'), error: res.listenerCount('error') };
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(res.headers.get('x-total-count'), String(total));
      // Read slowly, so the server waits for the client between pages.
      const reader = res.body!.getReader();
      let text = '';
      const decoder = new TextDecoder();
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        text += decoder.decode(r.value, { stream: true });
        await delay(2);
      }
      assert.equal(text.split('\r\n').filter(Boolean).length, total + 1, 'the header and every row');
      await delay(50);
      assert.ok(listeners.close! <= 2 && listeners.error! <= 2, `listeners left: ${JSON.stringify(listeners)}`);
      assert.deepEqual(
        warnings.filter((w) => w.name === 'MaxListenersExceededWarning'),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      server.close();
    }
  });
});
