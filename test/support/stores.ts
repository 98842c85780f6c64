import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe } from 'node:test';
import type { Binary, Db } from 'mongodb';
import { storeChoice } from '../../server/config.js';
import { packFile, packsFolder } from '../../server/store/content/packs.js';
import { openEmbeddedStore } from '../../server/store/embedded.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';

/** A small chunk size in tests, so multi-chunk files stay small. */
export const TEST_CHUNK_SIZE = 64 * 1024;

export interface StoreTarget {
  name: 'embedded' | 'mongodb';
  /** Why this target's tests are skipped, if they are. */
  skip: string | false;
  /** A fresh, empty store. */
  open(options?: { chunkSize?: number }): Promise<OpenedStore>;
}

export interface OpenedStore {
  store: ArchiveStore;
  /** Closes the store and opens the same data again with another chunk size (a restart with a new CHUNK_SIZE). */
  reopen(options: { chunkSize: number }): Promise<ArchiveStore>;
  /** Closes the store and removes everything it wrote. */
  dispose(): Promise<void>;
  /** For MongoDB targets: the URI and database, to check the data with stock tools. */
  mongo?: { uri: string; dbName: string };
  /** For the embedded target: its data directory. */
  dataDir?: string;
  chunkSize: number;
}

/**
 * A fresh, empty store for each test of the suite being declared (disposed of after it): `use`
 * receives it before the test runs.
 */
export function useFreshStore(target: StoreTarget, use: (opened: OpenedStore) => unknown): void {
  let opened: OpenedStore | undefined;
  beforeEach(async () => {
    opened = await target.open();
    use(opened);
  });
  afterEach(async () => {
    await opened?.dispose();
  });
}

/**
 * Declares a store capability's conformance suite against one adapter. Each test gets a fresh,
 * empty store; `body` is handed `store`, which stands for the store of whichever test runs.
 */
export function conformanceSuite(capability: string, target: StoreTarget, body: (store: ArchiveStore) => void): void {
  describe(`${capability} conformance: ${target.name}`, { skip: target.skip }, () => {
    let current: ArchiveStore | undefined;
    useFreshStore(target, (fresh) => (current = fresh.store));
    body(
      new Proxy({} as ArchiveStore, {
        get: (_, name) => {
          if (!current) throw new Error('the store is only there while a test runs');
          return Reflect.get(current, name) as unknown;
        },
      }),
    );
  });
}

export function tempDir(prefix = 'archive-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The embedded store of a data directory a server process keeps (CHUNK_SIZE at its default), opened
 * in the test's own process to seed or read what the server keeps there.
 */
export function openEmbeddedAt(dataDir: string, chunkSize = 255 * 1024): ArchiveStore {
  return openEmbeddedStore({ dataDir, chunkSize });
}

export const embeddedTarget: StoreTarget = {
  name: 'embedded',
  skip: false,
  async open(options = {}) {
    const dataDir = tempDir();
    const chunkSize = options.chunkSize ?? TEST_CHUNK_SIZE;
    const opened: OpenedStore = {
      store: openEmbeddedStore({ dataDir, chunkSize }),
      dataDir,
      chunkSize,
      async reopen({ chunkSize }) {
        await opened.store.close();
        opened.chunkSize = chunkSize;
        return (opened.store = openEmbeddedStore({ dataDir, chunkSize }));
      },
      async dispose() {
        await opened.store.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
    return opened;
  },
};

/**
 * The MongoDB of the test run: the one the environment chooses as it would for the server (STORE,
 * MONGODB_URI), so a pair the server refuses stops the tests too, rather than skipping MongoDB's
 * suites unnoticed. The embedded suites need nothing and always run.
 */
export const mongoUri = storeChoice(process.env).mongodbUri;

/**
 * The MongoDB driver and adapter, loaded when a MongoDB store is first used: loading them costs
 * every test process a quarter of a second of CPU, for nothing when MONGODB_URI is not set.
 */
const mongodb = () => import('mongodb');
const mongoAdapter = () => import('../../server/store/mongo.js');

export const mongoTarget: StoreTarget = {
  name: 'mongodb',
  skip: mongoUri
    ? false
    : 'MongoDB is not chosen (start MongoDB, e.g. with docker compose, and set MONGODB_URI to run these)',
  async open(options = {}) {
    const dbName = `archive_test_${randomBytes(6).toString('hex')}`;
    const chunkSize = options.chunkSize ?? TEST_CHUNK_SIZE;
    const { openMongoStore } = await mongoAdapter();
    const connect = (chunkSize: number) =>
      openMongoStore({ uri: mongoUri!, dbName, chunkSize, connectTimeoutMs: 5000 });
    const opened: OpenedStore = {
      store: await connect(chunkSize),
      chunkSize,
      mongo: { uri: mongoUri!, dbName },
      async reopen({ chunkSize }) {
        await opened.store.close();
        opened.chunkSize = chunkSize;
        return (opened.store = await connect(chunkSize));
      },
      async dispose() {
        await opened.store.close();
        const { MongoClient } = await mongodb();
        const client = await MongoClient.connect(mongoUri!);
        await client.db(dbName).dropDatabase();
        await client.close();
      },
    };
    return opened;
  },
};

export const storeTargets: StoreTarget[] = [embeddedTarget, mongoTarget];

/**
 * A fresh MongoDB store and a connection of the test's own to its database (to look at, or change,
 * the documents behind the store's back); both closed after `use`.
 */
export async function withMongoStore(use: (opened: OpenedStore, db: Db) => Promise<void>): Promise<void> {
  const opened = await mongoTarget.open();
  const { MongoClient } = await mongodb();
  const client = await MongoClient.connect(opened.mongo!.uri);
  try {
    await use(opened, client.db(opened.mongo!.dbName));
  } finally {
    await client.close();
    await opened.dispose();
  }
}

/** Chunks a store holds in all (committed and staged): test-only peeking into each database. */
export async function countChunks(opened: OpenedStore): Promise<number> {
  if (opened.mongo) {
    const { MongoClient } = await mongodb();
    const client = await MongoClient.connect(opened.mongo.uri);
    try {
      return await client.db(opened.mongo.dbName).collection('fileContent.chunks').countDocuments();
    } finally {
      await client.close();
    }
  }
  // Embedded: each content file holds ceil(size / chunkSize) chunks.
  let chunks = 0;
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else chunks += Math.ceil(fs.statSync(p).size / opened.chunkSize);
    }
  };
  walk(path.join(opened.dataDir!, 'content'));
  return chunks;
}

export type Damage =
  | { kind: 'flip-byte'; offset: number }
  | { kind: 'lose-chunk'; n: number }
  | { kind: 'grow-chunk'; n: number }
  | { kind: 'lose-file' };

/**
 * Damages a committed file's stored bytes behind the store's back, as a failing disk or a careless
 * hand would. `lose-chunk` n: MongoDB loses that chunk document; the embedded store's content
 * file is cut short at the chunk (it keeps chunks back to back, so the rest goes too).
 */
export async function damageContent(opened: OpenedStore, fileId: string, damage: Damage): Promise<void> {
  if (opened.mongo) {
    const { MongoClient, ObjectId } = await mongodb();
    const client = await MongoClient.connect(opened.mongo.uri);
    try {
      const chunks = client.db(opened.mongo.dbName).collection('fileContent.chunks');
      const files_id = new ObjectId(fileId);
      if (damage.kind === 'lose-file') await chunks.deleteMany({ files_id });
      else if (damage.kind === 'lose-chunk') await chunks.deleteOne({ files_id, n: damage.n });
      else if (damage.kind === 'grow-chunk') {
        const doc = await chunks.findOne({ files_id, n: damage.n });
        const bin = doc!.data as Binary;
        await chunks.updateOne(
          { _id: doc!._id },
          { $set: { data: Buffer.concat([Buffer.from(bin.buffer.subarray(0, bin.position)), Buffer.alloc(16)]) } },
        );
      } else {
        const n = Math.floor(damage.offset / opened.chunkSize);
        const doc = await chunks.findOne({ files_id, n });
        const bin = doc!.data as Binary;
        const data = Buffer.from(bin.buffer.subarray(0, bin.position));
        data[damage.offset % opened.chunkSize]! ^= 0xff;
        await chunks.updateOne({ _id: doc!._id }, { $set: { data } });
      }
    } finally {
      await client.close();
    }
    return;
  }
  // A packed content's bytes are a range of its pack (damage to it here assumes it is the pack's last).
  const packed = await packedAt(opened, fileId);
  const file = packed
    ? packFile(packsFolder(opened.dataDir!), packed.pack_id)
    : path.join(opened.dataDir!, 'content', fileId.slice(0, 2), fileId.slice(2, 4), fileId);
  const base = packed?.pack_offset ?? 0;
  if (damage.kind === 'lose-file') fs.rmSync(file);
  else if (damage.kind === 'lose-chunk') fs.truncateSync(file, base + damage.n * opened.chunkSize);
  // Chunks lie back to back in a content file: only the last can grow (bytes past the file's length).
  else if (damage.kind === 'grow-chunk') fs.appendFileSync(file, Buffer.alloc(16));
  else {
    const fd = fs.openSync(file, 'r+');
    const byte = Buffer.alloc(1);
    fs.readSync(fd, byte, 0, 1, base + damage.offset);
    byte[0]! ^= 0xff;
    fs.writeSync(fd, byte, 0, 1, base + damage.offset);
    fs.closeSync(fd);
  }
}

/** Where an embedded store keeps a packed content's bytes (undefined for a content file of its own). */
export async function packedAt(
  opened: OpenedStore,
  fileId: string,
): Promise<{ pack_id: string; pack_offset: number } | undefined> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'), { readonly: true });
  try {
    return db
      .prepare<[string], { pack_id: string; pack_offset: number }>(
        'SELECT p.pack_id, p.pack_offset FROM catalog c JOIN packed p USING (file_no) WHERE c.file_id = ?',
      )
      .get(fileId);
  } finally {
    db.close();
  }
}

/** Removes a file's chunk checksums, as a file stored before they existed has none. */
export async function forgetChunkSums(opened: OpenedStore, fileId: string): Promise<void> {
  if (opened.mongo) {
    const { MongoClient, ObjectId } = await mongodb();
    const client = await MongoClient.connect(opened.mongo.uri);
    try {
      await client
        .db(opened.mongo.dbName)
        .collection('fileContent.chunks')
        .updateMany({ files_id: new ObjectId(fileId) }, { $unset: { crc32: '' } });
    } finally {
      await client.close();
    }
    return;
  }
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'));
  try {
    db.prepare('DELETE FROM chunk_sums WHERE file_no = (SELECT file_no FROM catalog WHERE file_id = ?)').run(fileId);
  } finally {
    db.close();
  }
}

export interface SyncFaults {
  /** How many of the next fsyncs fail; each failure counts one down. */
  failing: number;
  /** The error code they fail with (EIO: a failing disk; ENOSPC: a thin or network volume out of space). */
  code: string;
  /** Settles once every fsync started so far has. */
  settled(): Promise<void>;
  restore(): void;
}

/**
 * Makes fsyncs of files this process writes through `fs.promises` (the embedded store's content
 * files; not SQLite's) fail as a failing disk's do, while `failing` > 0. The bytes stay in the
 * page cache here, so only a store that remembers the failure knows not to trust them.
 */
export async function injectSyncFailures(): Promise<SyncFaults> {
  const probe = await fs.promises.open(os.devNull, 'r');
  const proto = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
  await probe.close();
  // Kept to put the method back; it is called on its object again then.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const original = proto.datasync;
  const started: Promise<unknown>[] = [];
  const faults: SyncFaults = {
    failing: 0,
    code: 'EIO',
    settled: async () => {
      await Promise.allSettled(started);
      await new Promise((resolve) => setImmediate(resolve));
    },
    restore: () => {
      proto.datasync = original;
    },
  };
  proto.datasync = function (this: unknown) {
    const sync =
      faults.failing > 0
        ? (faults.failing--,
          Promise.reject(
            Object.assign(new Error(`${faults.code}: fdatasync failed`), { code: faults.code, syscall: 'fdatasync' }),
          ))
        : original.call(this);
    started.push(sync);
    return sync;
  };
  return faults;
}

/**
 * What a store still keeps of a content's bytes, behind its back: MongoDB, its GridFS files
 * document and chunks; embedded, its content file and the rows that locate it in a pack and check
 * its chunks (by the number it was catalogued under, `fileNo`, when it was packed or summed).
 */
export async function bytesKept(
  opened: OpenedStore,
  fileId: string,
  fileNo?: number,
): Promise<{ files: number; chunks: number; rows: number }> {
  if (opened.mongo) {
    const { MongoClient, ObjectId } = await mongodb();
    const client = await MongoClient.connect(opened.mongo.uri);
    try {
      const db = client.db(opened.mongo.dbName);
      const _id = new ObjectId(fileId);
      return {
        files: await db.collection('fileContent.files').countDocuments({ _id }),
        chunks: await db.collection('fileContent.chunks').countDocuments({ files_id: _id }),
        rows: 0,
      };
    } finally {
      await client.close();
    }
  }
  const file = path.join(opened.dataDir!, 'content', fileId.slice(0, 2), fileId.slice(2, 4), fileId);
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'), { readonly: true });
  try {
    const rows =
      fileNo === undefined
        ? 0
        : db
            .prepare<[number, number], { n: number }>(
              'SELECT (SELECT COUNT(*) FROM packed WHERE file_no = ?) + (SELECT COUNT(*) FROM chunk_sums WHERE file_no = ?) AS n',
            )
            .get(fileNo, fileNo)!.n;
    return { files: fs.existsSync(file) ? 1 : 0, chunks: 0, rows };
  } finally {
    db.close();
  }
}

/** An embedded store's number for a catalogued file (undefined on MongoDB, or when not catalogued). */
export async function fileNumber(opened: OpenedStore, fileId: string): Promise<number | undefined> {
  if (opened.mongo) return undefined;
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(opened.dataDir!, 'archive.sqlite'), { readonly: true });
  try {
    return db.prepare<[string], { file_no: number }>('SELECT file_no FROM catalog WHERE file_id = ?').get(fileId)
      ?.file_no;
  } finally {
    db.close();
  }
}
