import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { storeChoice } from '../../server/config.js';

/**
 * What a store holds, read straight from its database and files (test-only peeking), for
 * checks that no bytes are left without an owner. Read while no server process runs.
 */
export interface StoreInventory {
  /** Catalog entries: file id → length. */
  catalog: Map<string, number>;
  /**
   * Ids that hold bytes: content files (embedded) or the files ids of GridFS chunks and files
   * documents (MongoDB), with the bytes held (embedded) or chunk documents (MongoDB).
   */
  content: Map<string, number>;
  /** Staging areas on record (unfinished uploads and direct uploads in progress or abandoned). */
  staging: Set<string>;
  /** Resumable uploads on record. */
  uploads: Array<{ id: string; stagingId: string; length: number; offset: number; finished: boolean }>;
}

export async function inventory(env: Record<string, string>): Promise<StoreInventory> {
  const chosen = storeChoice(env);
  return chosen.store === 'mongodb'
    ? mongoInventory(chosen.mongodbUri, env.MONGODB_DB!)
    : embeddedInventory(env.DATA_DIR!);
}

function embeddedInventory(dataDir: string): StoreInventory {
  const db = new Database(path.join(dataDir, 'archive.sqlite'), { fileMustExist: true });
  try {
    const catalog = new Map(
      db
        .prepare<[], { file_id: string; length: number }>('SELECT file_id, length FROM catalog')
        .all()
        .map((r) => [r.file_id, r.length]),
    );
    const staging = new Set(
      db
        .prepare<[], { staging_id: string }>('SELECT staging_id FROM staging')
        .all()
        .map((r) => r.staging_id),
    );
    const uploads = db
      .prepare<[], { id: string; staging_id: string; length: number; offset: number; outcome: string | null }>(
        'SELECT id, staging_id, length, "offset", outcome FROM uploads',
      )
      .all()
      .map((r) => ({
        id: r.id,
        stagingId: r.staging_id,
        length: r.length,
        offset: r.offset,
        finished: r.outcome !== null,
      }));
    const content = new Map<string, number>();
    const walk = (dir: string) => {
      if (!fs.existsSync(dir)) return;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else content.set(e.name, fs.statSync(p).size);
      }
    };
    walk(path.join(dataDir, 'content'));
    return { catalog, content, staging, uploads };
  } finally {
    db.close();
  }
}

async function mongoInventory(uri: string, dbName: string): Promise<StoreInventory> {
  // Loaded here: the driver costs a test process a quarter of a second of CPU to load (stores.ts).
  const { MongoClient } = await import('mongodb');
  const client = await MongoClient.connect(uri);
  try {
    const db = client.db(dbName);
    const catalog = new Map<string, number>();
    for await (const d of db.collection('fileInfo.files').find({}, { projection: { fileLength: 1 } }))
      catalog.set(d._id.toHexString(), Number(d.fileLength));
    const content = new Map<string, number>();
    for await (const c of db.collection('fileContent.chunks').find({}, { projection: { files_id: 1 } })) {
      const id = c.files_id.toHexString();
      content.set(id, (content.get(id) ?? 0) + 1);
    }
    for await (const f of db.collection('fileContent.files').find({}, { projection: { _id: 1 } })) {
      const id = f._id.toHexString();
      if (!content.has(id)) content.set(id, 0);
    }
    const staging = new Set<string>();
    for await (const s of db.collection('fileContent.staging').find({}, { projection: { _id: 1 } }))
      staging.add(s._id.toHexString());
    const uploads: StoreInventory['uploads'] = [];
    for await (const u of db.collection('uploads.resumable').find({})) {
      uploads.push({
        id: String(u._id),
        stagingId: u.stagingId.toHexString(),
        length: Number(u.length),
        offset: Number(u.offset),
        finished: u.outcome != null,
      });
    }
    return { catalog, content, staging, uploads };
  } finally {
    await client.close();
  }
}
