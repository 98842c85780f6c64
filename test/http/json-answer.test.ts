import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import type { Server } from 'node:http';
import { sendJson } from '../../server/http/json-answer.js';

/**
 * `sendJson`, which answers a receipt's withdrawals and restores: the same JSON `res.json` sends,
 * written a piece at a time (lists item by item, made as they are read) rather than as one text.
 */
describe('an answer written as it is read', () => {
  let server: Server;
  let url: string;
  /** What the route answers: lists made as they are read, each item counted when made. */
  let made = 0;
  /** The lengths of the pieces the route wrote before its last. */
  let pieces: number[] = [];
  const answer = (size: number) => ({
    done: (function* () {
      for (let i = 0; i < size; i++) {
        made++;
        yield { id: i, fileName: `卷/第${i}页.pdf`, note: null, skipped: undefined, unit: { town: '清州镇' } };
      }
    })(),
    none: [],
    plain: [1, 'two', null, [3]],
    skippedRows: 2,
    absent: undefined,
  });
  const expected = (size: number) =>
    JSON.stringify({
      done: Array.from({ length: size }, (_, i) => ({
        id: i,
        fileName: `卷/第${i}页.pdf`,
        note: null,
        unit: { town: '清州镇' },
      })),
      none: [],
      plain: [1, 'two', null, [3]],
      skippedRows: 2,
    });

  before(async () => {
    const app = express();
    app.use((_req, res, next) => {
      const write = res.write.bind(res) as (chunk: string) => boolean;
      res.write = ((chunk: string) => {
        pieces.push(chunk.length);
        return write(chunk);
      }) as typeof res.write;
      next();
    });
    app.get('/answer/:size', async (req, res) => {
      await sendJson(res, answer(Number(req.params.size)));
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  it('answers a small answer as res.json would, with its length', async () => {
    pieces = [];
    const res = await fetch(`${url}/answer/3`);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(await res.text(), expected(3));
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(expected(3))));
    assert.deepEqual(pieces, [], 'one end, no pieces');
  });

  it('writes a large one in pieces (chunked), the same JSON, each item made only as it is written', async () => {
    made = 0;
    pieces = [];
    const res = await fetch(`${url}/answer/10000`);
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(await res.text(), expected(10_000));
    assert.equal(made, 10_000);
    // About 650 kB in pieces of 16 to 17 thousand characters: never the whole text at once.
    assert.ok(pieces.length >= 30, `${pieces.length} pieces`);
    assert.ok(Math.max(...pieces) < 20_000, `the largest piece: ${Math.max(...pieces)} characters`);
  });
});
