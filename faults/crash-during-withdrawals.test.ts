import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { MongoClient, ObjectId } from 'mongodb';
import { composeServices } from '../server/compose.js';
import { loadConfig } from '../server/config.js';
import { openStore } from '../server/store/open.js';
import { checkBody, digestsFor, md5, sha256 } from '../test/support/content.js';
import { addAccount, createToken, freePort, killServer, processStore, startServer } from '../test/support/process.js';
import type { ProcessStore, Started } from '../test/support/process.js';
import { Client } from '../test/support/server.js';
import { storeTargets } from '../test/support/stores.js';
import { contentBytes, faultSeed, generator } from './seeded.js';
import { EFFECTS, Model, settleGivenUp } from './withdrawals-model.js';
import type { Content, Effect, ModelHold, ModelUpload } from './withdrawals-model.js';

/**
 * Fault test of correcting the archive (issue 41): a seeded random schedule of uploads (single
 * files, batches with their receipts, instant claims of content the archive holds), withdrawals
 * (one upload, several, a whole receipt; by the clerk or an administrator), restores, purges
 * (chosen withdrawals, or the whole trash emptied), disposals (销毁, by the top-level
 * administrator), and requests sent twice (an answer lost on purpose), while the server is killed
 * with SIGKILL at random moments, many of them in the middle of a withdrawal, a restore, a purge
 * or a disposal. A request that lost its answer to a kill is sent again, or sometimes given up,
 * left for the garbage collector's sweep (`finishInterrupted`), which then runs with its
 * compaction. Then every total the archive keeps is compared with a model's: each entry's
 * UploadCount, the day tallies and space saved (per county: who holds the bytes), repeat
 * uploaders, cross-unit duplicates, the trash, the receipts' withdrawal markers, and the audit
 * log's withdrawals, restores, purges and disposals (one each, or none where a kill fell after the
 * step and before its event: never two; docs/decisions/withdrawal.md); and no byte of a content
 * purged or disposed of is readable: its download is refused, and its bytes are in no content
 * file, pack or GridFS chunk (docs/decisions/purge.md, disposal.md).
 *
 * The operations are a table (OPERATIONS: how each is chosen from the model and sent) and so
 * are their effects on the model (EFFECTS): purge and disposal are one row in each (emptying the
 * trash is a purge of all of it, and runs alone).
 *
 * Replay a run with FAULT_SEED=<the printed seed> (the schedule and the kills' targets are the
 * seed's; where a kill lands in a request also depends on timing). FAULT_OPERATIONS sets the
 * number of operations (60), FAULT_STORE one store only; `npm run faults:seeds` runs many seeds
 * (faults/README.md).
 */

const KiB = 1024;
const SEED = faultSeed();
const OPERATION_COUNT = Number(process.env.FAULT_OPERATIONS ?? 60);
/**
 * Holds (冻结) and their lifts among the operations; FAULT_HOLDS=0 leaves them out, and so draws the
 * schedules seeds had before holds were added (to replay those).
 */
const HOLDS = process.env.FAULT_HOLDS !== '0';
/** Distinct contents of a run; each belongs to one worker, so one file's uploads change in sequence. */
const CONTENTS = 24;
const WORKERS = 2;
const KILLS = 10;
/** Kills that must land while operations run. */
const MIN_KILLS = 6;
const CHUNK_SIZE = 64 * KiB;
/** Of requests that lost their answer to a kill, the share given up (withdrawals and restores only). */
const ABANDON = 0.25;
/** Of answered requests, the share sent again as if the answer had been lost. */
const REPEAT = 0.15;
/** How long a request is sent again while the server restarts (MongoDB on a loaded machine: minutes). */
const RESTART_PATIENCE_MS = 300_000;
/** The sweep finishes withdrawals interrupted over a minute ago: it runs as if this much later. */
const LATER_MS = 3 * 24 * 3600_000;

/** Accounts: three clerks in two units of two counties, and an administrator of their city. */
const CLERKS = [
  { name: 'clerk-a', unit: 'unit-a', county: '青县' },
  { name: 'clerk-a2', unit: 'unit-a', county: '青县' },
  { name: 'clerk-b', unit: 'unit-b', county: '献县' },
] as const;
const ADMIN = 'boss';
/** The top-level administrator: disposals (销毁) are theirs alone. */
const TOP = 'top';

type RequestKind = 'upload' | 'receipt' | 'withdraw' | 'restore' | 'purge' | 'dispose' | 'hold';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** FAULT_TRACE=1: each operation's effect, each lost answer and each kill, timed, to read a failing seed by. */
const trace = (line: string) => {
  if (process.env.FAULT_TRACE) console.log(`trace ${new Date().toISOString().slice(11, 23)} ${line}`);
};

/** An answer the archive should never give here: fails the run instead of being retried. */
class Unexpected extends Error {}

// FAULT_STORE=embedded or mongodb: one store only (the seeds of each can then run side by side).
for (const target of storeTargets.filter((t) => !process.env.FAULT_STORE || t.name === process.env.FAULT_STORE)) {
  describe(
    `uploads, withdrawals, restores, purges and disposals while the server is killed (kill -9) at random moments (${target.name} store)`,
    { skip: target.skip, timeout: 900_000 },
    () => {
      const rng = generator(SEED);
      const contents: Content[] = [];
      {
        const drawn = new Set<string>();
        const edges = [0, 1, CHUNK_SIZE - 1, CHUNK_SIZE + 1];
        for (let i = 0; contents.length < CONTENTS; i++) {
          const size = i < edges.length ? edges[i]! : Math.floor(Math.exp(rng() * Math.log(512 * KiB)));
          const data = contentBytes(SEED, i, size);
          if (drawn.has(sha256(data))) continue;
          drawn.add(sha256(data));
          contents.push({ data, worker: contents.length % WORKERS });
        }
      }
      const model = new Model((clerk) => CLERKS[clerk]!.unit);
      let store: ProcessStore;
      let server: Started;
      let port: number;
      let url: string;
      let clerks: Client[];
      let accountIds: string[];
      /** The directory's id of each clerk's unit, by its name (what a unit hold names). */
      const unitIds = new Map<string, string>();
      let admin: Client;
      let top: Client;
      const kills: number[] = [];
      /** Requests from sending to answer (or failure), for what a kill fell into. */
      const windows: Array<{ kind: RequestKind; start: number; end: number }> = [];
      const durations = new Map<RequestKind, number[]>();
      const serverErrors: string[] = [];
      const statuses = new Map<number, number>();
      const operationsRun = new Map<string, number>();
      const tally = { lostAnswers: 0, givenUp: 0, repeated: 0, swept: 0, done: 0, refused: 0 };
      /** Contents a batch carried when the archive held them already: their bytes were written to a pack and never located. */
      const batchDuplicates = new Set<number>();
      let waiting: { kind: RequestKind | 'any'; resolve: () => void } | undefined;
      let finished = false;

      const env = () => ({
        ...store.env,
        PORT: String(port),
        GC_INTERVAL_SECONDS: '0',
        CHUNK_SIZE: String(CHUNK_SIZE),
      });

      const clientOf = (actor: string) =>
        actor === ADMIN ? admin : actor === TOP ? top : clerks[CLERKS.findIndex((c) => c.name === actor)]!;

      /**
       * Operations run side by side, one worker's on its own contents; emptying the trash touches
       * every worker's, so it runs alone: a worker holds `shared` from planning an operation to
       * applying its effect, and `alone` waits for both workers to be between operations.
       */
      const lock = { active: 0, alone: undefined as Promise<void> | undefined };
      async function acquire(alone: boolean): Promise<() => void> {
        while (lock.alone) await lock.alone;
        if (!alone) {
          lock.active++;
          return () => void lock.active--;
        }
        let release!: () => void;
        lock.alone = new Promise((r) => (release = r));
        while (lock.active > 0) await sleep(10);
        return () => {
          lock.alone = undefined;
          release();
        };
      }

      /**
       * One request of an operation, sent until it is answered (the server restarting under it), or
       * given up after a lost answer when `giveUp` says so. 5xx answers are noted (the run fails on
       * them) and sent again.
       */
      async function exchange(
        kind: RequestKind,
        send: (signal: AbortSignal) => Promise<Response>,
        giveUp: () => boolean = () => false,
        // The answer's JSON, read as fetch's json() is: each check names the fields it expects.
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
      ): Promise<{ status: number; body: any; lost: boolean } | undefined> {
        const giveUpAt = performance.now() + RESTART_PATIENCE_MS;
        let lost = false;
        for (;;) {
          const w = { kind, start: performance.now(), end: Infinity };
          if (waiting && (waiting.kind === kind || waiting.kind === 'any')) waiting.resolve();
          try {
            const res = await send(AbortSignal.timeout(60_000));
            const text = await res.text();
            w.end = performance.now();
            const taken = durations.get(kind) ?? [];
            taken.push(w.end - w.start);
            durations.set(kind, taken.slice(-20));
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status >= 500) {
              serverErrors.push(`${res.status} on ${kind}: ${text.slice(0, 300)}`);
              trace(`${res.status} on ${kind}: ${text.slice(0, 300)}`);
              // Not sent again for ever: a 5xx that keeps coming fails the run with what it said.
              if (performance.now() > giveUpAt) throw new Unexpected(`${kind}: ${serverErrors.at(-1)}`);
              lost = true;
              await sleep(200);
              continue;
            }
            return { status: res.status, body: text ? JSON.parse(text) : undefined, lost };
          } catch (err) {
            w.end = performance.now();
            if (performance.now() > giveUpAt) throw err;
            // Given up, or not, once: at the first answer lost.
            if (!lost) {
              trace(`lost answer: ${kind} (${String(err)})`);
              lost = true;
              tally.lostAnswers++;
              if (giveUp()) return undefined;
            }
            await sleep(200);
          } finally {
            windows.push(w);
          }
        }
      }

      const post =
        (client: Client, path: string, body: unknown, headers: Record<string, string> = {}) =>
        (signal: AbortSignal) =>
          client.fetch(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
            signal,
          });

      /** Sent again now and then as if its answer had been lost: the same answer, nothing counted twice. */
      const repeatNow = (wrng: () => number) => {
        const again = wrng() < REPEAT;
        if (again) tally.repeated++;
        return again;
      };

      /** A single file, `POST /api/files` under an Idempotency-Key. */
      async function single(worker: number, wrng: () => number, n: number, clerk: number, content: number) {
        const key = `s-${SEED}-${worker}-${n}`;
        const send = (signal: AbortSignal) => {
          const form = new FormData();
          form.append('file', new Blob([contents[content]!.data], { type: 'application/pdf' }), `卷-${n}.pdf`);
          return clerks[clerk]!.fetch('/api/files', {
            method: 'POST',
            body: form,
            headers: { 'idempotency-key': key },
            signal,
          });
        };
        const answer = (await exchange('upload', send))!;
        if (answer.status !== 200 && answer.status !== 201)
          throw new Unexpected(`single upload ${key}: ${answer.status} ${JSON.stringify(answer.body)}`);
        if (repeatNow(wrng)) {
          const again = (await exchange('upload', send))!;
          assert.equal(again.body.fileId, answer.body.fileId, `${key} sent again: the same file`);
        }
        return {
          id: `direct:${accountIds[clerk]}:${key}`,
          clerk,
          content,
          fileId: answer.body.fileId as string,
          status: answer.body.status as string,
          carries: true,
        };
      }

      const OPERATIONS: Array<{
        name: string;
        weight: number;
        /** What to do, chosen from the model (undefined: nothing it could be done to yet). */
        plan(worker: number, wrng: () => number, n: number): (() => Promise<Effect>) | undefined;
        /** Runs with no other operation under way (it touches every worker's contents). */
        alone?: boolean;
      }> = [
        {
          name: 'single upload',
          weight: 3,
          plan(worker, wrng, n) {
            const mine = model.uploadable(worker, contents);
            if (mine.length === 0) return undefined;
            const content = mine[Math.floor(wrng() * mine.length)]!;
            const clerk = Math.floor(wrng() * CLERKS.length);
            return async () => ({ kind: 'counted', uploads: [await single(worker, wrng, n, clerk, content)] });
          },
        },
        {
          name: 'batch upload and its receipt',
          weight: 2,
          plan(worker, wrng, n) {
            const mine = model.uploadable(worker, contents);
            const files = mine.filter(() => wrng() < 0.35).slice(0, 6);
            if (files.length === 0) return undefined;
            const clerk = Math.floor(wrng() * CLERKS.length);
            return async () => {
              const client = clerks[clerk]!;
              const keys = files.map((_, i) => `b-${SEED}-${worker}-${n}-${i}`);
              const paths = files.map((_, i) => `卷宗${n}/第${i + 1}页.pdf`);
              const send = (signal: AbortSignal) => {
                const form = new FormData();
                const manifest = files.map((c, i) => ({
                  md5: md5(contents[c]!.data),
                  sha256: sha256(contents[c]!.data),
                  name: paths[i],
                  key: keys[i],
                }));
                form.append('manifest', JSON.stringify(manifest));
                for (const c of files)
                  form.append('file', new Blob([contents[c]!.data], { type: 'application/pdf' }), 'p.pdf');
                return client.fetch('/api/uploads/batch', {
                  method: 'POST',
                  body: form,
                  headers: { 'idempotency-key': `batch-${SEED}-${worker}-${n}` },
                  signal,
                });
              };
              const answer = (await exchange('upload', send))!;
              if (answer.status !== 200)
                throw new Unexpected(`batch ${n}: ${answer.status} ${JSON.stringify(answer.body)}`);
              const results = answer.body.results as Array<{ status: string; fileId: string }>;
              trace(`batch ${n} answer (lost ${answer.lost}): ${JSON.stringify(answer.body)}`);
              if (repeatNow(wrng)) {
                const again = (await exchange('upload', send))!;
                assert.deepEqual(
                  (again.body.results as typeof results).map((r) => r.fileId),
                  results.map((r) => r.fileId),
                  `batch ${n} sent again`,
                );
              }
              for (const [i, c] of files.entries()) if (results[i]!.status === 'duplicate') batchDuplicates.add(c);
              const receipt = createHash('md5').update(`${SEED}/${worker}/${n}`).digest('hex');
              const at = new Date().toISOString();
              const rows = files.map((c, i) => ({
                path: paths[i],
                size: contents[c]!.data.length,
                outcome: results[i]!.status,
                via: 'batch',
                key: keys[i],
                at,
              }));
              const kept = (await exchange('receipt', (signal) =>
                client.fetch(`/api/receipts/${receipt}`, {
                  method: 'PUT',
                  headers: { 'content-type': 'application/json' },
                  body: JSON.stringify({ title: `卷宗${n}`, startedAt: at, rows }),
                  signal,
                }),
              ))!;
              if (kept.status !== 200)
                throw new Unexpected(`receipt ${n}: ${kept.status} ${JSON.stringify(kept.body)}`);
              return {
                kind: 'counted',
                receipt,
                uploads: files.map((content, i) => ({
                  id: `file:${accountIds[clerk]}:${keys[i]}`,
                  clerk,
                  content,
                  fileId: results[i]!.fileId,
                  status: results[i]!.status,
                  carries: true,
                })),
              };
            };
          },
        },
        {
          name: 'instant upload',
          weight: 2,
          plan(worker, wrng, n) {
            const held = model.uploadable(worker, contents).filter((c) => model.fileIds.has(c));
            if (held.length === 0) return undefined;
            const content = held[Math.floor(wrng() * held.length)]!;
            const clerk = Math.floor(wrng() * CLERKS.length);
            return async () => {
              const client = clerks[clerk]!;
              const data = contents[content]!.data;
              for (;;) {
                const check = (await exchange(
                  'upload',
                  post(client, '/api/uploads/check', checkBody(data, `i-${n}.pdf`)),
                ))!;
                if (check.status !== 200) throw new Unexpected(`check ${n}: ${check.status}`);
                if (check.body.status === 'upload')
                  return { kind: 'counted', uploads: [await single(worker, wrng, n, clerk, content)] };
                const { claimId, ranges } = check.body as {
                  claimId: string;
                  ranges: Array<{ start: number; end: number }>;
                };
                const prove = post(client, '/api/uploads/prove', { claimId, digests: digestsFor(data, ranges) });
                const proof = (await exchange('upload', prove))!;
                // Refused after a lost answer: the claim was taken and not counted before a kill; check again.
                if (proof.status === 403 && proof.body.error === 'claim_rejected' && proof.lost) continue;
                if (proof.status !== 200)
                  throw new Unexpected(`prove ${n}: ${proof.status} ${JSON.stringify(proof.body)}`);
                if (repeatNow(wrng)) {
                  const again = (await exchange('upload', prove))!;
                  assert.deepEqual(
                    [again.status, again.body.fileId],
                    [200, proof.body.fileId],
                    `proof ${claimId} again`,
                  );
                }
                return {
                  kind: 'counted',
                  uploads: [
                    {
                      id: `claim:${claimId}`,
                      clerk,
                      content,
                      fileId: proof.body.fileId,
                      status: 'duplicate',
                      carries: false,
                    },
                  ],
                };
              }
            };
          },
        },
        ...(['one', 'several'] as const).map((how) => ({
          name: `withdrawal of ${how} upload${how === 'one' ? '' : 's'}`,
          weight: how === 'one' ? 2 : 1.5,
          plan(worker: number, wrng: () => number) {
            // Uploads whose file is held or not, for certain (a hold given up leaves it unknown).
            const known = model.certain(worker, contents).filter((u) => model.held(u.fileId) !== undefined);
            const counted = known.filter((u) => u.counted);
            if (counted.length === 0) return undefined;
            const first = counted[Math.floor(wrng() * counted.length)]!;
            const byAdmin = wrng() < 0.3;
            const actor = byAdmin ? ADMIN : CLERKS[first.clerk]!.name;
            const theirs = known.filter((u) => byAdmin || u.clerk === first.clerk);
            const picked = new Set([first.id]);
            if (how === 'several')
              for (const u of theirs) if (picked.size < 5 && u.id !== first.id && wrng() < 0.3) picked.add(u.id);
            return () => withdraw(actor, { uploads: [...picked] }, [...picked], wrng);
          },
        })),
        {
          name: 'withdrawal of a receipt',
          weight: 1,
          plan(worker, wrng) {
            const receipts = [...model.receipts].filter(
              ([, r]) =>
                contents[model.uploads.get(r.uploadIds[0]!)!.content]!.worker === worker &&
                r.uploadIds.every((id) => !model.uploads.get(id)!.uncertain) &&
                r.uploadIds.every((id) => !live(id) || model.held(model.uploads.get(id)!.fileId) !== undefined) &&
                // A purged upload is listed as withdrawn before; one of a disposed file is not asked about.
                r.uploadIds.every((id) => model.uploads.get(id)!.gone !== 'disposed') &&
                r.uploadIds.some((id) => model.uploads.get(id)!.counted),
            );
            if (receipts.length === 0) return undefined;
            const [receipt, { clerk, uploadIds }] = receipts[Math.floor(wrng() * receipts.length)]!;
            return () => withdraw(CLERKS[clerk]!.name, { receipt }, uploadIds, wrng);
          },
        },
        {
          name: 'restore',
          weight: 2.5,
          plan(worker, wrng) {
            const withdrawn = model.certain(worker, contents).filter((u) => !u.counted);
            if (withdrawn.length === 0) return undefined;
            const upload = withdrawn[Math.floor(wrng() * withdrawn.length)]!;
            const actor = wrng() < 0.3 ? ADMIN : CLERKS[upload.clerk]!.name;
            const id = upload.withdrawal!;
            return async () => {
              const send = post(clientOf(actor), `/api/withdrawals/${id}/restore`, {});
              const answer = await exchange('restore', send, () => wrng() < ABANDON);
              if (!answer) return { kind: 'given up', what: 'withdrawal', uploadIds: [upload.id] };
              const restored =
                answer.status === 200 ||
                (answer.lost && answer.status === 409 && answer.body.error === 'already_restored');
              if (!restored)
                throw new Unexpected(`restore ${id} by ${actor}: ${answer.status} ${JSON.stringify(answer.body)}`);
              if (repeatNow(wrng)) {
                const again = (await exchange('restore', send))!;
                assert.deepEqual([again.status, again.body.error], [409, 'already_restored'], `restore ${id} again`);
              }
              return { kind: 'restored', withdrawalId: id, lostAnswer: answer.lost };
            };
          },
        },
        {
          name: 'purge',
          weight: 1.5,
          plan(worker, wrng) {
            // Of contents none of whose uploads is uncertain: whether the content goes depends on all.
            const settled = new Set(model.uploadable(worker, contents));
            const inTrash = model
              .certain(worker, contents)
              .filter(
                (u) =>
                  !u.counted &&
                  u.withdrawal !== undefined &&
                  settled.has(u.content) &&
                  model.held(u.fileId) !== undefined,
              );
            if (inTrash.length === 0) return undefined;
            const picked = inTrash.filter(() => wrng() < 0.4).slice(0, 3);
            if (picked.length === 0) picked.push(inTrash[Math.floor(wrng() * inTrash.length)]!);
            const ids = picked.map((u) => u.withdrawal!);
            // A held file's withdrawals are skipped (冻结), the others purged.
            const held = picked.filter((u) => model.held(u.fileId)).map((u) => u.withdrawal!);
            const purgeable = ids.filter((id) => !held.includes(id));
            return async () => {
              const send = post(admin, '/api/trash/purge', { withdrawals: ids });
              const answer = await exchange('purge', send, () => wrng() < ABANDON);
              if (!answer)
                return {
                  kind: 'given up',
                  what: 'purge',
                  uploadIds: picked.filter((u) => purgeable.includes(u.withdrawal!)).map((u) => u.id),
                };
              if (answer.status !== 200)
                throw new Unexpected(`purge of ${ids.join(', ')}: ${answer.status} ${JSON.stringify(answer.body)}`);
              // A first try that lost its answer may have purged some or all: this one lists the rest.
              const purged = (answer.body.purged as Array<{ id: string }>).map((w) => w.id);
              if (!answer.lost) assert.deepEqual(purged.sort(), [...purgeable].sort(), `purge of ${ids.join(', ')}`);
              assert.deepEqual(skippedOf(answer.body), heldSkips(held), `purge of ${ids.join(', ')}: the held skipped`);
              if (held.length > 0) tally.refused++;
              if (repeatNow(wrng)) {
                const again = (await exchange('purge', send))!;
                assert.deepEqual(
                  [again.status, again.body.purged, skippedOf(again.body)],
                  [200, [], heldSkips(held)],
                  `purge of ${ids.join(', ')} again`,
                );
              }
              return { kind: 'purged', withdrawalIds: purgeable, lostAnswer: answer.lost };
            };
          },
        },
        {
          name: 'emptying the trash',
          weight: 0.3,
          alone: true,
          plan() {
            // Every worker's trash: only when nothing is uncertain (a withdrawal given up may be half done).
            // (and no hold given up: whether it holds a file decides whether the file's withdrawals go).
            if (model.anythingUncertain()) return undefined;
            const open = [...model.withdrawals.values()].filter((w) => w.open);
            if (open.length === 0) return undefined;
            const held = open.filter((w) => model.held(model.uploads.get(w.uploadId)!.fileId)).map((w) => w.id);
            const purgeable = open.map((w) => w.id).filter((id) => !held.includes(id));
            return async () => {
              const answer = (await exchange('purge', post(admin, '/api/trash/empty', {})))!;
              if (answer.status !== 200)
                throw new Unexpected(`emptying: ${answer.status} ${JSON.stringify(answer.body)}`);
              if (!answer.lost)
                assert.deepEqual(
                  (answer.body.purged as Array<{ id: string }>).map((w) => w.id).sort(),
                  purgeable.sort(),
                  'emptying the trash purges every withdrawal in it but those of held files',
                );
              assert.deepEqual(skippedOf(answer.body), heldSkips(held), 'emptying the trash: the held skipped');
              if (held.length > 0) tally.refused++;
              return { kind: 'purged', withdrawalIds: purgeable, lostAnswer: answer.lost };
            };
          },
        },
        {
          name: 'disposal',
          weight: 1,
          plan(worker, wrng, n) {
            const live = model
              .uploadable(worker, contents)
              .filter((c) => model.fileIds.has(c) && model.held(model.fileIds.get(c)!) !== undefined);
            if (live.length === 0) return undefined;
            const content = live[Math.floor(wrng() * live.length)]!;
            const fileId = model.fileIds.get(content)!;
            const uploadIds = [...model.uploads.values()].filter((u) => u.fileId === fileId).map((u) => u.id);
            const held = model.held(fileId)!;
            return async () => {
              const send = post(top, '/api/disposals', {
                fileIds: [fileId],
                reason: '保管期满，经鉴定无继续保存价值',
                approvalRef: `沧档销〔2026〕${SEED}-${worker}-${n}号`,
                confirm: '销毁',
              });
              const answer = await exchange('dispose', send, () => wrng() < ABANDON);
              if (!answer) return { kind: 'given up', what: 'disposal', uploadIds };
              // A held file is refused, nothing changed (after a lost answer too: the first try was refused).
              if (held) return refusal(answer, 'disposal', [fileId], `disposal of ${fileId}`);
              const disposed =
                (answer.status === 200 &&
                  [...answer.body.disposed, ...answer.body.alreadyDisposed].some(
                    (d: { fileId: string; state: string }) => d.fileId === fileId && d.state === 'disposed',
                  )) ||
                (answer.lost && answer.status === 409 && answer.body.error === 'already_disposed');
              if (!disposed)
                throw new Unexpected(`disposal of ${fileId}: ${answer.status} ${JSON.stringify(answer.body)}`);
              if (repeatNow(wrng)) {
                const again = (await exchange('dispose', send))!;
                assert.deepEqual(
                  [again.status, again.body.error],
                  [409, 'already_disposed'],
                  `disposal of ${fileId} again`,
                );
              }
              return { kind: 'disposed', content, fileId, lostAnswer: answer.lost };
            };
          },
        },
      ];

      /** An upload whose file is not deleted (purged or disposed of): a withdrawal names it. */
      function live(uploadId: string): boolean {
        const u = model.uploads.get(uploadId)!;
        return model.fileIds.get(u.content) === u.fileId;
      }

      /** A purge's skipped withdrawals, as the model compares them. */
      const skippedOf = (body: { skipped: Array<{ id: string; reason: string }> }) =>
        body.skipped.map((s) => `${s.id} ${s.reason}`).sort();
      const heldSkips = (ids: string[]) => ids.map((id) => `${id} held`).sort();

      /** A withdrawal or disposal of held files: refused whole, 423 file_on_hold, naming them. */
      function refusal(
        answer: { status: number; body: { error?: string; details?: { files: string[]; count: number } } },
        what: 'withdrawal' | 'disposal',
        fileIds: string[],
        request: string,
      ): Effect {
        if (answer.status !== 423 || answer.body.error !== 'file_on_hold')
          throw new Unexpected(
            `${request} of held file(s) ${fileIds.join(', ')}: ${answer.status} ${JSON.stringify(answer.body)}`,
          );
        const details = answer.body.details!;
        assert.equal(details.count, fileIds.length, `${request}: the held files counted`);
        for (const f of details.files) assert.ok(fileIds.includes(f), `${request}: ${f} is one of the held`);
        tally.refused++;
        return { kind: 'refused', what, fileIds };
      }

      /** Every hold the archive keeps, active or lifted (the top-level administrator sees all). */
      async function listHolds(signal?: AbortSignal): Promise<Response> {
        return top.fetch('/api/holds?state=all&limit=500', signal ? { signal } : {});
      }

      /**
       * `POST /api/holds`, not idempotent: after a lost answer the holds' list says, by the request's
       * own reason, whether the first try placed it, and only if not is it sent again.
       */
      async function placeHold(
        hold: { reason: string; files?: string[]; unit?: string; by: string },
        wrng: () => number,
      ): Promise<Effect> {
        const request = {
          reason: hold.reason,
          ...(hold.files ? { files: hold.files } : { unit: unitIds.get(hold.unit!) }),
        };
        let tries = 0;
        const send = async (signal: AbortSignal) => {
          if (tries++ > 0) {
            const list = await listHolds(signal);
            if (list.status !== 200) return list;
            const found = ((await list.json()).items as Array<{ reason: string }>).find(
              (h) => h.reason === hold.reason,
            );
            if (found) return new Response(JSON.stringify(found), { status: 201 });
          }
          return post(clientOf(hold.by), '/api/holds', request)(signal);
        };
        const answer = await exchange('hold', send, () => wrng() < ABANDON);
        if (!answer) return { kind: 'hold given up', what: 'place', hold };
        if (answer.status !== 201)
          throw new Unexpected(`hold "${hold.reason}": ${answer.status} ${JSON.stringify(answer.body)}`);
        const view = answer.body as {
          id: string;
          active: boolean;
          scope: { kind: 'files'; files: Array<{ id: string }> } | { kind: 'unit'; unit: { id: string } };
        };
        assert.equal(view.active, true, `hold "${hold.reason}" is active`);
        assert.deepEqual(
          view.scope.kind === 'files' ? view.scope.files.map((f) => f.id).sort() : view.scope.unit.id,
          hold.files ? [...hold.files].sort() : unitIds.get(hold.unit!),
          `hold "${hold.reason}": what it holds`,
        );
        return { kind: 'held', hold: { ...hold, id: view.id }, lostAnswer: answer.lost };
      }

      /** `POST /api/holds/:id/lift`: safe to send again (a lifted hold is answered as it was lifted). */
      async function liftHold(hold: ModelHold, actor: string, wrng: () => number): Promise<Effect> {
        const send = post(clientOf(actor), `/api/holds/${hold.id}/lift`, {});
        const answer = await exchange('hold', send, () => wrng() < ABANDON);
        if (!answer) return { kind: 'hold given up', what: 'lift', hold: { reason: hold.reason, by: hold.by } };
        if (answer.status !== 200 || answer.body.active !== false)
          throw new Unexpected(`lift of "${hold.reason}" by ${actor}: ${answer.status} ${JSON.stringify(answer.body)}`);
        if (repeatNow(wrng)) {
          const again = (await exchange('hold', send))!;
          assert.deepEqual(
            [again.status, again.body.liftedAt],
            [200, answer.body.liftedAt],
            `lift of "${hold.reason}" again: as it was lifted`,
          );
        }
        return { kind: 'lifted', reason: hold.reason, lostAnswer: answer.lost };
      }

      /**
       * 冻结 and 解除冻结: file holds on a worker's own files (by the city's administrator or the
       * top-level one), and unit holds, which cover files of every worker and so run alone, with
       * nothing uncertain (a hold's coming or going must not change what a request given up did).
       */
      // Lifts a little likelier than holds: with holds first at 1.5 against lifts at 0.8, 4–6 holds
      // piled up and a run made 1 withdrawal instead of about 17 (2026-11-29).
      const HOLD_OPERATIONS: typeof OPERATIONS = [
        {
          name: 'hold of files',
          weight: 1,
          plan(worker, wrng, n) {
            const live = model.uploadable(worker, contents).filter((c) => model.fileIds.has(c));
            if (live.length === 0) return undefined;
            const files = live.filter(() => wrng() < 0.3).slice(0, 3);
            if (files.length === 0) files.push(live[Math.floor(wrng() * live.length)]!);
            const by = wrng() < 0.5 ? TOP : ADMIN;
            const reason = `审计调查 ${SEED}-${worker}-${n}`;
            return () => placeHold({ reason, files: files.map((c) => model.fileIds.get(c)!), by }, wrng);
          },
        },
        {
          name: 'lift of a file hold',
          weight: 1.2,
          plan(worker, wrng) {
            const settled = new Set(model.uploadable(worker, contents).flatMap((c) => model.fileIds.get(c) ?? []));
            const holds = [...model.holds.values()].filter(
              (h) => h.active && !h.uncertain && h.files?.every((f) => settled.has(f)),
            );
            if (holds.length === 0) return undefined;
            const hold = holds[Math.floor(wrng() * holds.length)]!;
            // The top-level administrator's file holds are the whole archive's: only they see them.
            const actor = hold.by === TOP || wrng() < 0.3 ? TOP : ADMIN;
            return () => liftHold(hold, actor, wrng);
          },
        },
        {
          name: 'hold of a unit',
          weight: 0.3,
          alone: true,
          plan(worker, wrng, n) {
            if (model.anythingUncertain()) return undefined;
            const unit = CLERKS[Math.floor(wrng() * CLERKS.length)]!.unit;
            const by = wrng() < 0.5 ? TOP : ADMIN;
            return () => placeHold({ reason: `巡视整改 ${SEED}-${worker}-${n}`, unit, by }, wrng);
          },
        },
        {
          name: 'lift of a unit hold',
          weight: 0.6,
          alone: true,
          plan(_worker, wrng) {
            if (model.anythingUncertain()) return undefined;
            const holds = [...model.holds.values()].filter((h) => h.active && h.unit !== undefined);
            if (holds.length === 0) return undefined;
            const hold = holds[Math.floor(wrng() * holds.length)]!;
            return () => liftHold(hold, wrng() < 0.5 ? TOP : ADMIN, wrng);
          },
        },
      ];
      if (HOLDS) OPERATIONS.push(...HOLD_OPERATIONS);

      /** `POST /api/withdrawals`; `named`: the uploads it names (a receipt's rows). */
      async function withdraw(actor: string, by: object, named: string[], wrng: () => number): Promise<Effect> {
        // Refused whole when a file of the uploads it names (a live one: a deleted file's rows are skipped) is held.
        const held = [
          ...new Set(
            named
              .filter((id) => live(id) && model.held(model.uploads.get(id)!.fileId))
              .map((id) => model.uploads.get(id)!.fileId),
          ),
        ];
        const send = post(clientOf(actor), '/api/withdrawals', { reason: 'wrong_file', ...by });
        const answer = await exchange('withdraw', send, () => wrng() < ABANDON);
        if (!answer) return { kind: 'given up', what: 'withdrawal', uploadIds: named };
        if (held.length > 0)
          return refusal(answer, 'withdrawal', held, `withdrawal by ${actor} of ${JSON.stringify(by)}`);
        let withdrawals: Array<{ id: string; uploadId: string }>;
        if (answer.status === 200) {
          const body = answer.body as { withdrawn: typeof withdrawals; alreadyWithdrawn: typeof withdrawals };
          withdrawals = [...body.withdrawn, ...body.alreadyWithdrawn].map(({ id, uploadId }) => ({ id, uploadId }));
          const before = named.filter((id) => !model.uploads.get(id)!.counted);
          // Withdrawn before this request (not by a first try of it that lost its answer): listed as such.
          if (!answer.lost)
            assert.deepEqual(
              body.alreadyWithdrawn.map((w) => w.uploadId).sort(),
              before.sort(),
              `withdrawal by ${actor} of ${JSON.stringify(by)}: those withdrawn before`,
            );
        } else if (answer.lost && answer.status === 409 && answer.body.error === 'already_withdrawn') {
          // A first try did it all and lost its answer: the trash says under which withdrawals.
          const trash = (await exchange('withdraw', (signal) => admin.fetch('/api/trash?limit=500', { signal })))!;
          withdrawals = (trash.body.items as Array<{ id: string; uploadId: string }>)
            .filter((w) => named.includes(w.uploadId))
            .map(({ id, uploadId }) => ({ id, uploadId }));
          assert.deepEqual(
            (answer.body.details.withdrawals as string[]).sort(),
            withdrawals.map((w) => w.id).sort(),
            'the refusal names the withdrawals the trash lists',
          );
        } else
          throw new Unexpected(
            `withdrawal by ${actor} of ${JSON.stringify(by)}: ${answer.status} ${JSON.stringify(answer.body)}`,
          );
        assert.deepEqual(
          withdrawals.map((w) => w.uploadId).sort(),
          [...named].sort(),
          `withdrawal by ${actor} of ${JSON.stringify(by)}: every upload it names`,
        );
        if (repeatNow(wrng)) {
          const again = (await exchange('withdraw', send))!;
          assert.deepEqual(
            [again.status, again.body.error],
            [409, 'already_withdrawn'],
            `withdrawal ${JSON.stringify(by)} again`,
          );
          assert.deepEqual((again.body.details.withdrawals as string[]).sort(), withdrawals.map((w) => w.id).sort());
        }
        return { kind: 'withdrawn', by: actor, withdrawals, lostAnswer: answer.lost };
      }

      before(
        async () => {
          console.log(`fault run seed ${SEED} (${target.name} store): replay with FAULT_SEED=${SEED}`);
          store = processStore(target);
          for (const c of CLERKS) addAccount(store.env, c.name, { unit: c.unit, county: c.county });
          addAccount(store.env, ADMIN, { role: 'admin', unit: 'city' });
          addAccount(store.env, TOP, { role: 'admin', unit: 'archive' });
          port = await freePort();
          server = await startServer(env());
          url = server.url;
          clerks = CLERKS.map((c) => new Client(url, { bearer: createToken(store.env, c.name) }));
          admin = new Client(url, { bearer: createToken(store.env, ADMIN) });
          top = new Client(url, { bearer: createToken(store.env, TOP) });
          accountIds = [];
          for (const [i, clerk] of clerks.entries()) {
            const { account } = await (await clerk.fetch('/api/session')).json();
            accountIds.push(account.id);
            unitIds.set(CLERKS[i]!.unit, account.unit.id);
          }

          const started = performance.now();
          let failure: unknown;
          // Operations keep pace with the killer: no more than their share runs before each kill it
          // has still to make, so a run that goes fast meets every kill all the same (one that
          // outran the killer was killed five times only, and failed MIN_KILLS).
          let killing = true;
          const atGate = () => killing && tally.done >= Math.ceil(((kills.length + 1) * OPERATION_COUNT) / (KILLS + 1));
          const worker = async (w: number) => {
            const wrng = generator(SEED + 7919 * (w + 1));
            for (let n = 0; n < OPERATION_COUNT / WORKERS && failure === undefined; n++) {
              while (atGate() && failure === undefined) await sleep(10);
              const total = OPERATIONS.reduce((sum, o) => sum + o.weight, 0);
              for (;;) {
                let draw = wrng() * total;
                const op = OPERATIONS.find((o) => (draw -= o.weight) < 0) ?? OPERATIONS[0]!;
                const release = await acquire(op.alone === true);
                try {
                  const run = op.plan(w, wrng, n);
                  if (!run) continue;
                  trace(`w${w} n${n} ${op.name} begins`);
                  const effect = await run();
                  trace(`w${w} n${n} ${op.name}: ${JSON.stringify(effect)}`);
                  if (effect.kind === 'given up') tally.givenUp++;
                  (EFFECTS[effect.kind] as (m: Model, e: Effect) => void)(model, effect);
                  operationsRun.set(op.name, (operationsRun.get(op.name) ?? 0) + 1);
                  tally.done++;
                } catch (err) {
                  failure ??= err;
                } finally {
                  release();
                }
                break;
              }
            }
          };
          const allDone = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w))).then(() => {
            finished = true;
          });
          // The killer: each kill aims at a kind of request (mostly withdrawals and restores), waits
          // for the next one to be sent, and lands within about as long as such a request takes.
          const krng = generator(SEED ^ 0x5eed);
          const aims: Array<RequestKind | 'any'> = [
            'withdraw',
            'withdraw',
            'restore',
            'restore',
            'purge',
            'purge',
            'dispose',
            'upload',
            'any',
            // Holds: a kill in the middle of a placement or a lift (not among the aims of seeds drawn before them).
            ...(HOLDS ? (['hold'] as const) : []),
          ];
          for (let k = 0; k < KILLS && !finished; k++) {
            const doneBefore = tally.done;
            while (!finished && tally.done < doneBefore + 1 && !atGate()) await sleep(10);
            const aim = aims[Math.floor(krng() * aims.length)]!;
            const sent = new Promise<void>((resolve) => (waiting = { kind: aim, resolve }));
            // At the gate no new request comes: the kill lands between operations.
            await Promise.race([sent, sleep(atGate() ? 0 : 5000), allDone]);
            waiting = undefined;
            const taken = durations.get(aim === 'any' ? 'upload' : aim) ?? [20];
            await Promise.race([sleep(krng() * 1.2 * (taken.reduce((a, b) => a + b, 0) / taken.length)), allDone]);
            if (finished) break;
            kills.push(performance.now());
            trace(`kill ${kills.length} (aimed at ${aim})`);
            await killServer(server);
            await sleep(krng() * 200);
            server = await startServer(env());
            trace(`server started after kill ${kills.length}`);
          }
          killing = false;
          await allDone;
          // eslint-disable-next-line @typescript-eslint/only-throw-error
          if (failure !== undefined) throw failure;
          const runSeconds = (performance.now() - started) / 1000;

          // The garbage collector's sweep, as if over a minute later: it finishes what was given up.
          await killServer(server);
          const config = loadConfig(env());
          const opened = await openStore(config);
          const later = () => new Date(Date.now() + LATER_MS);
          const archive = composeServices(opened, config, later);
          try {
            tally.swept = (await archive.gc.run()).finishedCounts;
            assert.deepEqual(
              await opened.withdrawals.unfinished(['withdrawing', 'restoring', 'purging'], later(), 10),
              [],
              'the sweep leaves nothing unfinished',
            );
          } finally {
            await archive.digests.close();
            await opened.close();
          }
          server = await startServer(env());
          // What happened to what was given up: the trash says, and every total must agree.
          const trash = (await (await admin.fetch('/api/trash?limit=500')).json()) as {
            items: Array<{ id: string; uploadId: string; withdrawnBy: { username: string } }>;
          };
          const register = (await (await top.fetch('/api/disposals?limit=500')).json()) as {
            items: Array<{ fileId: string; state: string }>;
          };
          const holds = (await (await listHolds()).json()) as {
            items: Array<{ id: string; reason: string; active: boolean }>;
          };
          settleGivenUp(model, trash.items, register.items, holds.items);
          const hits = (kind: RequestKind) =>
            windows.filter((w) => w.kind === kind && kills.some((k) => w.start < k && k < w.end)).length;
          console.log(
            `${tally.done} operations in ${runSeconds.toFixed(1)} s with ${kills.length} kills (requests hit: ` +
              `withdraw ${hits('withdraw')}, restore ${hits('restore')}, purge ${hits('purge')}, dispose ${hits('dispose')}, ` +
              `upload ${hits('upload')}, receipt ${hits('receipt')}, hold ${hits('hold')}); ` +
              `${tally.lostAnswers} lost answers, ${tally.givenUp} given up, ${tally.repeated} sent twice, ${tally.swept} finished by the sweep; ` +
              `${[...operationsRun].map(([k, v]) => `${k} ${v}`).join(', ')}; ` +
              `${model.uploads.size} uploads, ${model.counted().length} counted, ${model.withdrawals.size} withdrawals, ` +
              `${[...model.withdrawals.values()].filter((w) => w.purged).length} purged, ${model.disposals.size} files disposed of, ` +
              `${model.goneFiles.size} contents deleted, ${model.holds.size} holds (${[...model.holds.values()].filter((h) => h.active).length} active), ${tally.refused} refused or skipped as held; ` +
              `statuses: ${[...statuses].map(([s, c]) => `${s}×${c}`).join(' ')}`,
          );
        },
        { timeout: 840_000 },
      );

      after(async () => {
        if (server) await killServer(server);
        await store?.dispose();
      });

      it('every operation was answered, with the server killed several times, never with 5xx', () => {
        assert.ok(kills.length >= MIN_KILLS, `the server was killed at least ${MIN_KILLS} times (${kills.length})`);
        assert.equal(tally.done, WORKERS * Math.ceil(OPERATION_COUNT / WORKERS));
        assert.deepEqual(serverErrors, [], 'the server never answered 5xx');
      });

      it("every entry's UploadCount is the model's: each clerk's own, and everybody's", async () => {
        const expected = (clerk?: number) => {
          const counts = new Map<string, number>();
          for (const u of model.counted())
            if (clerk === undefined || u.clerk === clerk) {
              const fileId = model.fileIds.get(u.content)!;
              counts.set(fileId, (counts.get(fileId) ?? 0) + 1);
            }
          return new Map([...counts].sort());
        };
        for (const [clerk, client] of clerks.entries()) {
          const list = await (await client.fetch('/api/files?limit=200')).json();
          const mine = new Map(
            (list.items as Array<{ fileId: string; myUploadCount: number }>)
              .filter((f) => f.myUploadCount > 0)
              .map((f) => [f.fileId, f.myUploadCount] as const)
              .sort(),
          );
          assert.deepEqual(mine, expected(clerk), `${CLERKS[clerk]!.name}'s own counts`);
        }
        const all = await (await admin.fetch('/api/files?limit=200')).json();
        const everybody = new Map(
          (all.items as Array<{ fileId: string; uploadCount: number }>)
            .filter((f) => f.uploadCount > 0)
            .map((f) => [f.fileId, f.uploadCount] as const)
            .sort(),
        );
        assert.deepEqual(everybody, expected(), "everybody's counts");
      });

      /** The model's space saved over some uploads: per file, every counted upload but its holder's. */
      function savedOf(select: (u: ModelUpload) => boolean) {
        const holders = new Set(model.holders.values());
        const mine = model.counted().filter(select);
        const saved = mine.filter((u) => !holders.has(u.id));
        return {
          uploads: mine.length,
          savedUploads: saved.length,
          savedBytes: saved.reduce((sum, u) => sum + contents[u.content]!.data.length, 0),
        };
      }

      /**
       * On MongoDB, where the whole archive's saved uploads differ from the model's: each file whose
       * day tallies differ, with its first-upload record and its uploads' counts and states, printed
       * to read the failure by.
       */
      async function explainSavings(): Promise<void> {
        if (target.name !== 'mongodb') return;
        const client = await MongoClient.connect(store.env.MONGODB_URI!);
        try {
          const db = client.db(store.env.MONGODB_DB);
          const tallies = new Map<string, { uploads: number; saved: number }>();
          for await (const day of db.collection('userInfo.uploadDays').find({})) {
            const t = tallies.get(String(day.UploadFileID)) ?? { uploads: 0, saved: 0 };
            t.uploads += Number(day.Uploads);
            t.saved += Number(day.SavedUploads);
            tallies.set(String(day.UploadFileID), t);
          }
          const holders = new Set(model.holders.values());
          const expected = new Map<string, { uploads: number; saved: number }>();
          for (const u of model.counted()) {
            const e = expected.get(u.fileId) ?? { uploads: 0, saved: 0 };
            e.uploads++;
            if (!holders.has(u.id)) e.saved++;
            expected.set(u.fileId, e);
          }
          for (const fileId of new Set([...tallies.keys(), ...expected.keys()])) {
            const [got, want] = [tallies.get(fileId), expected.get(fileId)];
            if ((got?.uploads ?? 0) === (want?.uploads ?? 0) && (got?.saved ?? 0) === (want?.saved ?? 0)) continue;
            const events = await db
              .collection('audit.events')
              .find({ fileId, upload: { $exists: true } })
              .project({ at: 1, upload: 1, pending: 1 })
              .toArray();
            const states = await db
              .collection('userInfo.uploads')
              .find({ _id: { $in: events.map((e) => e._id) } } as object)
              .toArray();
            console.log(
              `savings of file ${fileId}: the store ${JSON.stringify(got)}, the model ${JSON.stringify(want)}; ` +
                `first upload ${JSON.stringify(await db.collection('userInfo.firstUploads').findOne({ _id: new ObjectId(fileId) }))}; ` +
                `days ${JSON.stringify(
                  await db
                    .collection('userInfo.uploadDays')
                    .find({ UploadFileID: new ObjectId(fileId) })
                    .toArray(),
                )}; ` +
                `counts ${JSON.stringify(events)}; states ${JSON.stringify(states)}; ` +
                `model ${JSON.stringify([...model.uploads.values()].filter((u) => u.fileId === fileId))}`,
            );
          }
        } finally {
          await client.close();
        }
      }

      it('the day tallies and space saved are the model’s, per day and per county (who holds the bytes)', async () => {
        const summary = await (await admin.fetch('/api/reports/savings')).json();
        if (summary.summary.savedUploads !== savedOf(() => true).savedUploads) await explainSavings();
        assert.deepEqual(
          summary.summary,
          savedOf(() => true),
          'the whole archive',
        );
        const days = await (await admin.fetch('/api/reports/savings?group=day&limit=1000')).json();
        const modelDays = [...new Set(model.counted().map((u) => u.day))].sort();
        assert.deepEqual(
          (days.items as Array<{ period: string; uploads: number; savedUploads: number; savedBytes: number }>)
            .map(({ period, uploads, savedUploads, savedBytes }) => ({ period, uploads, savedUploads, savedBytes }))
            .sort((a, b) => a.period.localeCompare(b.period)),
          modelDays.map((period) => ({ period, ...savedOf((u) => u.day === period) })),
          'per day',
        );
        const counties = await (await admin.fetch(`/api/reports/savings?city=${encodeURIComponent('沧州市')}`)).json();
        const byCounty = new Map(
          (counties.items as Array<{ county: string; uploads: number; savedUploads: number; savedBytes: number }>).map(
            ({ county, uploads, savedUploads, savedBytes }) => [county, { uploads, savedUploads, savedBytes }],
          ),
        );
        for (const county of ['青县', '献县']) {
          const expected = savedOf((u) => CLERKS[u.clerk]!.county === county);
          assert.deepEqual(byCounty.get(county) ?? { uploads: 0, savedUploads: 0, savedBytes: 0 }, expected, county);
        }
      });

      it('repeat uploaders and cross-unit duplicates are the model’s', async () => {
        const entries = new Map<string, { clerk: number; content: number; count: number }>();
        for (const u of model.counted()) {
          const key = `${CLERKS[u.clerk]!.name}/${model.fileIds.get(u.content)!}`;
          const e = entries.get(key) ?? { clerk: u.clerk, content: u.content, count: 0 };
          e.count++;
          entries.set(key, e);
        }
        const repeats = await (await admin.fetch('/api/reports/repeat-uploaders?limit=1000')).json();
        assert.deepEqual(
          new Map(
            (repeats.items as Array<{ userName: string; fileId: string; uploadCount: number }>)
              .map((r) => [`${r.userName}/${r.fileId}`, r.uploadCount] as const)
              .sort(),
          ),
          new Map(
            [...entries]
              .filter(([, e]) => e.count >= 2)
              .map(([k, e]) => [k, e.count] as const)
              .sort(),
          ),
          'repeat entries',
        );
        const users = await (await admin.fetch('/api/reports/repeat-uploaders?group=user&limit=1000')).json();
        const expectedUsers = new Map<
          string,
          { files: number; uploads: number; repeatUploads: number; repeatBytes: number }
        >();
        for (const e of entries.values()) {
          if (e.count < 2) continue;
          const name = CLERKS[e.clerk]!.name;
          const t = expectedUsers.get(name) ?? { files: 0, uploads: 0, repeatUploads: 0, repeatBytes: 0 };
          t.files++;
          t.uploads += e.count;
          t.repeatUploads += e.count - 1;
          t.repeatBytes += (e.count - 1) * contents[e.content]!.data.length;
          expectedUsers.set(name, t);
        }
        assert.deepEqual(
          new Map(
            (
              users.items as Array<{
                userName: string;
                files: number;
                uploads: number;
                repeatUploads: number;
                repeatBytes: number;
              }>
            )
              .map(
                (r) =>
                  [
                    r.userName,
                    { files: r.files, uploads: r.uploads, repeatUploads: r.repeatUploads, repeatBytes: r.repeatBytes },
                  ] as const,
              )
              .sort(),
          ),
          new Map([...expectedUsers].sort()),
          'repeat uploaders per user',
        );
        const cross = await (await admin.fetch('/api/reports/cross-unit?limit=1000')).json();
        const files = new Map<string, { units: Set<string>; users: Set<number>; uploads: number }>();
        for (const u of model.counted()) {
          const fileId = model.fileIds.get(u.content)!;
          const f = files.get(fileId) ?? { units: new Set(), users: new Set(), uploads: 0 };
          f.units.add(CLERKS[u.clerk]!.unit);
          f.users.add(u.clerk);
          f.uploads++;
          files.set(fileId, f);
        }
        assert.deepEqual(
          new Map(
            (cross.items as Array<{ fileId: string; units: number; users: number; uploads: number }>)
              .map((r) => [r.fileId, { units: r.units, users: r.users, uploads: r.uploads }] as const)
              .sort(),
          ),
          new Map(
            [...files]
              .filter(([, f]) => f.units.size >= 2)
              .map(([id, f]) => [id, { units: f.units.size, users: f.users.size, uploads: f.uploads }] as const)
              .sort(),
          ),
          'cross-unit duplicates',
        );
      });

      it('the trash lists exactly the open withdrawals, to the administrator and to each unit', async () => {
        const open = [...model.withdrawals.values()].filter((w) => w.open);
        const listed = async (client: Client) =>
          ((await (await client.fetch('/api/trash?limit=500')).json()).items as Array<{ id: string; uploadId: string }>)
            .map((w) => `${w.id} ${w.uploadId}`)
            .sort();
        assert.deepEqual(await listed(admin), open.map((w) => `${w.id} ${w.uploadId}`).sort(), "the administrator's");
        for (const [clerk, client] of clerks.entries()) {
          const unit = CLERKS[clerk]!.unit;
          const theirs = open.filter((w) => CLERKS[model.uploads.get(w.uploadId)!.clerk]!.unit === unit);
          assert.deepEqual(
            await listed(client),
            theirs.map((w) => `${w.id} ${w.uploadId}`).sort(),
            `${CLERKS[clerk]!.name}'s`,
          );
        }
        for (const w of open)
          assert.equal(
            model.uploads.get(w.uploadId)!.withdrawal,
            w.id,
            `${w.uploadId}: the trash's withdrawal is its open one`,
          );
      });

      it('the receipts mark the withdrawn rows, under their open withdrawal, and no other', async () => {
        for (const [id, receipt] of model.receipts) {
          const view = await (await clerks[receipt.clerk]!.fetch(`/api/receipts/${id}`)).json();
          assert.deepEqual(
            (view.rows as Array<{ uploadId: string; withdrawal?: { id: string } }>).map((r) => [
              r.uploadId,
              r.withdrawal?.id ?? null,
            ]),
            receipt.uploadIds.map((u) => [u, model.uploads.get(u)!.withdrawal ?? null]),
            `receipt ${id}`,
          );
        }
      });

      it('no byte of a purged or disposed content is readable: not downloaded, not in a content file, pack or GridFS chunk', async () => {
        const problems: string[] = [];
        for (const fileId of model.goneFiles.keys()) {
          const res = await top.fetch(`/api/files/${fileId}`);
          await res.arrayBuffer();
          if (res.status !== 404 && res.status !== 410) problems.push(`${fileId}: downloaded with ${res.status}`);
        }
        // A content uploaded again after its deletion is stored anew: its bytes are live again.
        const gone = [...new Set(model.goneFiles.values())].filter((c) => !model.fileIds.has(c));
        // Contents of 16 bytes or more are looked for by their first 64 bytes (random: found only where they were written).
        const needles = gone
          .filter((c) => contents[c]!.data.length >= 16)
          .map((c) => ({ content: c, bytes: contents[c]!.data.subarray(0, 64) }));
        const lookIn = (where: string, data: Buffer) => {
          for (const n of needles)
            if (data.includes(n.bytes))
              problems.push(
                `content ${n.content}'s bytes in ${where}${batchDuplicates.has(n.content) ? ' (a batch carried it as a duplicate)' : ''}`,
              );
        };
        if (target.name === 'mongodb') {
          const client = await MongoClient.connect(store.env.MONGODB_URI!);
          try {
            const db = client.db(store.env.MONGODB_DB);
            for (const fileId of model.goneFiles.keys()) {
              const _id = new ObjectId(fileId);
              if (await db.collection('fileContent.files').countDocuments({ _id }))
                problems.push(`${fileId}: its GridFS files document is left`);
              const chunks = await db.collection('fileContent.chunks').countDocuments({ files_id: _id });
              if (chunks > 0) problems.push(`${fileId}: ${chunks} GridFS chunk(s) left`);
            }
            for await (const chunk of db.collection('fileContent.chunks').find({}, { projection: { data: 1 } }))
              lookIn(`chunk ${String(chunk._id)}`, Buffer.from((chunk.data as { buffer: Uint8Array }).buffer));
            // What the store knows of a file whose bytes are left: its catalog entry (a deletion's
            // mark), and the withdrawals of its uploads.
            for (const fileId of model.goneFiles.keys())
              if (problems.some((x) => x.startsWith(fileId))) {
                const entry = await db
                  .collection('fileInfo.files')
                  .findOne({ _id: new ObjectId(fileId) }, { projection: { deletingAt: 1, deletionCleared: 1 } });
                const withdrawals = await db
                  .collection('uploads.withdrawals')
                  .find({ 'Upload.FileID': fileId }, { projection: { State: 1, Uncleared: 1, UploadKey: 1 } })
                  .toArray();
                problems.push(
                  `${fileId}: catalog ${JSON.stringify(entry)}, withdrawals ${JSON.stringify(withdrawals)}`,
                );
              }
          } finally {
            await client.close();
          }
        }
        // Every file of the data directory (content files, packs, staging; on MongoDB what it keeps there).
        const walk = (dir: string): string[] =>
          fs
            .readdirSync(dir, { withFileTypes: true })
            .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
        const dataDir = store.env.DATA_DIR!;
        for (const file of walk(dataDir)) {
          if (model.goneFiles.has(path.basename(file)))
            problems.push(`${path.relative(dataDir, file)}: a deleted file's content file`);
          // A file the server removes meanwhile (a journal) holds nothing to find.
          let data: Buffer;
          try {
            data = fs.readFileSync(file);
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
            throw err;
          }
          lookIn(path.relative(dataDir, file), data);
        }
        if (problems.length > 0 && target.name === 'embedded') {
          // What the store knows of the packs holding them: located contents, and whether marked for erasure.
          const { default: Database } = await import('better-sqlite3');
          const db = new Database(path.join(dataDir, 'archive.sqlite'), { readonly: true });
          try {
            const packs = db
              .prepare(
                `SELECT p.pack_id, p.erase, COUNT(k.file_no) AS located, COALESCE(SUM(c.length), 0) AS live
                   FROM packs p LEFT JOIN packed k ON k.pack_id = p.pack_id LEFT JOIN catalog c ON c.file_no = k.file_no
                  GROUP BY p.pack_id`,
              )
              .all() as Array<{ pack_id: string; erase: number; located: number; live: number }>;
            for (const p of packs)
              if (problems.some((x) => x.includes(p.pack_id))) {
                const size = fs.statSync(path.join(dataDir, 'content', 'packs', `${p.pack_id}.pack`)).size;
                problems.push(
                  `pack ${p.pack_id}: ${size} bytes, ${p.live} live in ${p.located} content(s), erase ${p.erase}`,
                );
              }
          } finally {
            db.close();
          }
        }
        assert.deepEqual(problems, [], `${model.goneFiles.size} file(s) deleted, ${gone.length} content(s) gone`);
      });

      it('the holds are the model’s: each placed once, active or lifted as it says; each placement and lift in the audit log once, or none where a kill fell before its event', async () => {
        const listed = (
          (await (await listHolds()).json()).items as Array<{ id: string; reason: string; active: boolean }>
        )
          .map((h) => `${h.reason} ${h.id} ${h.active ? 'active' : 'lifted'}`)
          .sort();
        assert.deepEqual(
          listed,
          [...model.holds.values()].map((h) => `${h.reason} ${h.id} ${h.active ? 'active' : 'lifted'}`).sort(),
        );
        const events = async (action: string) => {
          const list = await (await top.fetch(`/api/audit?action=${action}&limit=1000`)).json();
          const per = new Map<string, number>();
          for (const e of list.items as Array<{ note: { holdId: string } }>)
            per.set(e.note.holdId, (per.get(e.note.holdId) ?? 0) + 1);
          return per;
        };
        const placed = await events('hold_placed');
        const lifted = await events('hold_lifted');
        const problems: string[] = [];
        for (const h of model.holds.values()) {
          const p = placed.get(h.id!) ?? 0;
          if (p > 1 || (p === 0 && !h.mayLosePlacedEvent)) problems.push(`${h.reason}: ${p} hold_placed`);
          const l = lifted.get(h.id!) ?? 0;
          if (l > (h.active ? 0 : 1) || (!h.active && l === 0 && !h.mayLoseLiftedEvent))
            problems.push(`${h.reason}: ${l} hold_lifted, ${h.active ? 'active' : 'lifted'}`);
        }
        const known = new Set([...model.holds.values()].map((h) => h.id));
        for (const id of [...placed.keys(), ...lifted.keys()])
          if (!known.has(id)) problems.push(`${id}: an event of a hold nobody placed`);
        assert.deepEqual(problems, []);
      });

      it('the audit log has each withdrawal, restore and purge exactly once (its event is recorded by whoever finishes it), and each disposal once, or none where a kill fell before its entry', async () => {
        const events = async (action: string) => {
          const list = await (await top.fetch(`/api/audit?action=${action}&limit=1000`)).json();
          const per = new Map<string, number>();
          for (const e of list.items as Array<{ note: { withdrawalId: string } }>)
            per.set(e.note.withdrawalId, (per.get(e.note.withdrawalId) ?? 0) + 1);
          return per;
        };
        const withdrawn = await events('upload_withdrawn');
        const restored = await events('upload_restored');
        const purged = await events('upload_purged');
        const problems: string[] = [];
        let lost = 0;
        for (const w of model.withdrawals.values()) {
          const n = withdrawn.get(w.id) ?? 0;
          // A kill between a step and its event no longer loses it (docs/decisions/withdrawal.md):
          // the event is recorded under the step's key by whoever finishes the step.
          if (n !== 1) problems.push(`${w.id}: ${n} upload_withdrawn`);
          const r = restored.get(w.id) ?? 0;
          if (r !== w.restores) problems.push(`${w.id}: ${r} upload_restored for ${w.restores}`);
          lost += 1 - n + w.restores - r;
          const p = purged.get(w.id) ?? 0;
          if (p !== (w.purged ? 1 : 0)) problems.push(`${w.id}: ${p} upload_purged, ${w.purged ? '' : 'not '}purged`);
          if (w.purged) lost += 1 - p;
        }
        for (const id of [...withdrawn.keys(), ...restored.keys(), ...purged.keys()])
          if (!model.withdrawals.has(id)) problems.push(`${id}: an event of a withdrawal nobody made`);
        const disposedEvents = new Map<string, number>();
        const list = await (await top.fetch('/api/audit?action=content_disposed&limit=1000')).json();
        for (const e of list.items as Array<{ fileId: string }>)
          disposedEvents.set(e.fileId, (disposedEvents.get(e.fileId) ?? 0) + 1);
        for (const [fileId, { lostAnswer }] of model.disposals) {
          const n = disposedEvents.get(fileId) ?? 0;
          if (n > 1 || (n === 0 && !lostAnswer)) problems.push(`${fileId}: ${n} content_disposed`);
        }
        for (const fileId of disposedEvents.keys())
          if (!model.disposals.has(fileId)) problems.push(`${fileId}: content_disposed of a file nobody disposed of`);
        assert.deepEqual(problems, []);
        console.log(
          `audit: ${withdrawn.size} withdrawals, ${[...restored.values()].reduce((a, b) => a + b, 0)} restores, ${purged.size} purges and ${disposedEvents.size} disposals recorded, ${lost} event(s) lost to kills`,
        );
        const uploads = new Map<string, number>();
        for (const action of ['upload', 'instant_upload']) {
          const list = await (await admin.fetch(`/api/audit?action=${action}&limit=1000`)).json();
          for (const e of list.items as Array<{ fileId: string }>)
            uploads.set(e.fileId, (uploads.get(e.fileId) ?? 0) + 1);
        }
        const made = new Map<string, number>();
        for (const u of model.uploads.values()) made.set(u.fileId, (made.get(u.fileId) ?? 0) + 1);
        assert.deepEqual(
          new Map([...uploads].sort()),
          new Map([...made].sort()),
          'one upload event per upload, withdrawn or not',
        );
      });
    },
  );
}
