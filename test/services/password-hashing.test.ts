import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoginBusyError } from '../../server/errors.js';
import { PasswordHashing, type HashingClaimant } from '../../server/services/password-hashing.js';

/** A password check that starts when its turn comes and ends when the test says so. */
class Check {
  started = false;
  private finish!: () => void;
  private fail!: (err: Error) => void;
  readonly done: Promise<string>;
  private readonly began: Promise<void>;
  private begin!: () => void;

  constructor(
    hashing: PasswordHashing,
    claimant: HashingClaimant,
    readonly name: string,
    order: string[],
  ) {
    this.began = new Promise((resolve) => (this.begin = resolve));
    this.done = hashing.run(claimant, () => {
      this.started = true;
      order.push(name);
      this.begin();
      return new Promise<string>((resolve, reject) => {
        this.finish = () => resolve(name);
        this.fail = reject;
      });
    });
  }

  /** Resolves once the check runs. */
  running(): Promise<void> {
    return this.began;
  }

  async end(): Promise<void> {
    await this.began;
    this.finish();
    await this.done;
  }

  async throw(): Promise<void> {
    await this.began;
    this.fail(new Error('scrypt failed'));
    await this.done.catch(() => {});
  }
}

/** Ends the checks one at a time, each once it runs (one runs at a time), in the order they get their turn. */
async function drain(checks: Check[]): Promise<void> {
  const left = new Set(checks);
  while (left.size > 0) {
    const next = await Promise.race([...left].map((c) => c.running().then(() => c)));
    left.delete(next);
    await next.end();
  }
}

function refusal(promise: Promise<unknown>): Promise<LoginBusyError> {
  return promise.then(
    () => assert.fail('expected a refusal'),
    (err: unknown) => {
      assert.ok(err instanceof LoginBusyError, String(err));
      return err;
    },
  );
}

// A check taken out of turn leaves the test waiting for one that never starts: fail instead (a
// safety net, generous: a busy machine hashes many times slower).
describe('the bound on login password checks', { timeout: 120_000 }, () => {
  it('runs at most `concurrency` checks at once, and the waiting ones as checks end', async () => {
    const hashing = new PasswordHashing({ concurrency: 3, queueLength: 10, perKey: 4 });
    const order: string[] = [];
    const checks = ['a', 'b', 'c', 'd'].map((name) => new Check(hashing, { address: `10.0.0.${name}` }, name, order));
    await Promise.all([checks[0]!.running(), checks[1]!.running()]);
    assert.deepEqual(order, ['a', 'b']);
    assert.deepEqual(hashing.load(), { running: 2, known: 0, other: 2 });
    await checks[1]!.end();
    await checks[2]!.running();
    assert.deepEqual(order, ['a', 'b', 'c'], 'one more once one ended');
    assert.equal(checks[3]!.started, false);
    await checks[0]!.throw();
    await checks[3]!.running();
    assert.deepEqual(hashing.load(), { running: 2, known: 0, other: 0 }, 'a failed check frees its place too');
    await Promise.all([checks[2]!.end(), checks[3]!.end()]);
    assert.deepEqual(hashing.load(), { running: 0, known: 0, other: 0 });
  });

  it('checks a try from an address the account logs in from before everyone waiting', async () => {
    const hashing = new PasswordHashing({ concurrency: 1, queueLength: 10, perKey: 4 });
    const order: string[] = [];
    const first = new Check(hashing, { address: '10.0.0.1' }, 'guess 1', order);
    const guesses = [2, 3, 4].map((i) => new Check(hashing, { address: `10.0.0.${i}` }, `guess ${i}`, order));
    const clerk = new Check(hashing, { address: '192.0.2.7', knownPair: 'clerk\n192.0.2.7' }, 'clerk', order);
    await drain([first, clerk, ...guesses]);
    assert.deepEqual(order, ['guess 1', 'clerk', 'guess 2', 'guess 3', 'guess 4']);
  });

  it("keeps one place for tries from an address the account logs in from: a clerk's check starts at once", async () => {
    const hashing = new PasswordHashing({ concurrency: 2, queueLength: 10, perKey: 4 });
    const order: string[] = [];
    const guesses = [1, 2, 3].map((i) => new Check(hashing, { address: `10.0.0.${i}` }, `guess ${i}`, order));
    await guesses[0]!.running();
    assert.deepEqual(hashing.load(), { running: 1, known: 0, other: 2 }, 'guesses take all places but one');
    const clerk = new Check(hashing, { address: '192.0.2.7', knownPair: 'clerk\n192.0.2.7' }, 'clerk', order);
    await clerk.running();
    assert.deepEqual(hashing.load(), { running: 2, known: 0, other: 2 });
    assert.equal(guesses[0]!.started && !guesses[1]!.started, true, 'while the first guess is still being checked');
    await drain([clerk, ...guesses]);
    assert.deepEqual(order, ['guess 1', 'clerk', 'guess 2', 'guess 3']);
  });

  it('takes the waiting checks of the addresses in turn, so one busy address delays another by one check a round', async () => {
    const hashing = new PasswordHashing({ concurrency: 1, queueLength: 10, perKey: 4 });
    const order: string[] = [];
    const running = new Check(hashing, { address: '10.0.0.9' }, 'running', order);
    const busy = [1, 2, 3].map((i) => new Check(hashing, { address: '203.0.113.1' }, `busy ${i}`, order));
    const office = new Check(hashing, { address: '192.0.2.50' }, 'office', order);
    await drain([running, ...busy, office]);
    assert.deepEqual(order, ['running', 'busy 1', 'office', 'busy 2', 'busy 3']);
  });

  it('refuses at once, with a wait to retry after, when an address has its share or a lane is full', async () => {
    const hashing = new PasswordHashing({ concurrency: 1, queueLength: 3, perKey: 2 });
    const order: string[] = [];
    const held = [new Check(hashing, { address: '10.0.0.1' }, 'a1', order)];
    held.push(new Check(hashing, { address: '10.0.0.1' }, 'a2', order));
    const share = await refusal(hashing.run({ address: '10.0.0.1' }, () => Promise.resolve('a3')));
    assert.ok(share.retryAfterSeconds >= 1);
    assert.match(share.message, /checking many passwords right now\. Wait \d+ second\(s\) and try again/);
    held.push(new Check(hashing, { address: '10.0.0.2' }, 'b', order));
    held.push(new Check(hashing, { address: '10.0.0.3' }, 'c', order));
    assert.deepEqual(hashing.load(), { running: 1, known: 0, other: 3 });
    await refusal(hashing.run({ address: '10.0.0.4' }, () => Promise.resolve('d')));
    // The known lane has its own places: a full queue of guesses does not refuse the office.
    const clerk = new Check(hashing, { address: '192.0.2.7', knownPair: 'clerk\n192.0.2.7' }, 'clerk', order);
    await drain([...held, clerk]);
    assert.deepEqual(order, ['a1', 'clerk', 'a2', 'b', 'c']);
    assert.equal(await hashing.run({ address: '10.0.0.1' }, () => Promise.resolve('later')), 'later');
  });

  it("queues a known pair's tries beyond its share with everyone else's", async () => {
    const hashing = new PasswordHashing({ concurrency: 1, queueLength: 10, perKey: 1 });
    const order: string[] = [];
    const pair = { address: '192.0.2.7', knownPair: 'clerk\n192.0.2.7' };
    const running = new Check(hashing, { address: '10.0.0.1' }, 'running', order);
    const guess = new Check(hashing, { address: '10.0.0.2' }, 'guess', order);
    const first = new Check(hashing, pair, 'pair 1', order);
    const second = new Check(hashing, pair, 'pair 2', order);
    assert.deepEqual(hashing.load(), { running: 1, known: 1, other: 2 });
    await drain([running, first, guess, second]);
    assert.deepEqual(order, ['running', 'pair 1', 'guess', 'pair 2']);
  });
});
