import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchArenas } from '../../server/http/batch-files.js';

const MiB = 1024 * 1024;
const request = () => ({});
const pieces = (...texts: string[]) => texts.map((text) => Buffer.from(text));

describe('batch arenas', () => {
  it("copies each file into its request's arena, back to back, as one piece", () => {
    const arenas = new BatchArenas(2);
    const req = request();
    arenas.lend(req, 1000);
    const [first] = arenas.place(req, pieces('第一', 'page'), Buffer.byteLength('第一page'));
    const [second] = arenas.place(req, pieces('second'), 6);
    assert.equal(first!.toString(), '第一page');
    assert.equal(second!.toString(), 'second');
    assert.equal(first!.buffer, second!.buffer, 'one arena');
    assert.ok(first!.buffer instanceof SharedArrayBuffer, 'shared with the digest workers, not copied to them');
    assert.equal(second!.byteOffset, first!.byteOffset + first!.byteLength, 'back to back');
  });

  it('keeps the pieces as they are without an arena, or when the arena is full', () => {
    const arenas = new BatchArenas(2);
    const given = pieces('a', 'b');
    assert.equal(arenas.place(request(), given, 2), given, 'no arena lent');
    const unknown = request();
    arenas.lend(unknown, Number('not a length'));
    assert.equal(arenas.place(unknown, given, 2), given, 'no arena for a length that is not one');
    const req = request();
    arenas.lend(req, 1);
    arenas.place(req, pieces('x'.repeat(8 * MiB - 3)), 8 * MiB - 3);
    const more = pieces('four');
    assert.equal(arenas.place(req, more, 4), more, 'no room left');
  });

  it('never lends one arena to two requests, and reuses it once given back', () => {
    const arenas = new BatchArenas(2);
    const [a, b] = [request(), request()];
    arenas.lend(a, 10);
    arenas.lend(b, 10);
    const [inA] = arenas.place(a, pieces('aaaa'), 4);
    const [inB] = arenas.place(b, pieces('bbbb'), 4);
    assert.notEqual(inA!.buffer, inB!.buffer);
    arenas.giveBack(a);
    // A file of the request that ends after its arena went back is not written there.
    const late = pieces('late');
    assert.equal(arenas.place(a, late, 4), late);
    const c = request();
    arenas.lend(c, 10);
    const [inC] = arenas.place(c, pieces('cccc'), 4);
    assert.equal(inC!.buffer, inA!.buffer, "a's arena, reused");
    assert.equal(inB!.toString(), 'bbbb', "b's files untouched");
  });

  it('keeps at most as many arenas as it was told, the largest, and none once idle', async () => {
    const arenas = new BatchArenas(2, 50);
    const requests = [1, 20, 40].map((mib) => {
      const req = request();
      arenas.lend(req, mib * MiB);
      return req;
    });
    for (const req of requests) arenas.giveBack(req);
    assert.equal(arenas.kept, 2);
    // The 40 MiB one serves a 30 MiB batch: nothing new is made.
    const big = request();
    arenas.lend(big, 30 * MiB);
    const [piece] = arenas.place(big, pieces('x'), 1);
    assert.equal(piece!.buffer.byteLength >= 40 * MiB, true);
    arenas.giveBack(big);
    await new Promise((resolve) => setTimeout(resolve, 120));
    assert.equal(arenas.kept, 0);
  });
});
