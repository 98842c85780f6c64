import { ObjectId, type Filter } from 'mongodb';
import { storedAuditNote } from '../../../shared/audit-notes.js';
import type { AuditEvent, AuditLog, AuditSearch } from './port.js';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';

export async function createAuditIndexes(c: AuditCollections): Promise<void> {
  await Promise.all([
    c.audit.createIndex({ at: -1 }, { name: 'at' }),
    c.audit.createIndex({ action: 1, at: -1 }, { name: 'action_at' }),
    c.audit.createIndex({ userName: 1, at: -1 }, { name: 'user_at' }),
    c.audit.createIndex({ 'unit.city': 1, 'unit.county': 1, 'unit.town': 1, at: -1 }, { name: 'unit_at' }),
    // Upload actions whose counting a crash interrupted (the field exists only until it is done).
    c.audit.createIndex({ pending: 1, at: 1 }, { sparse: true, name: 'pending' }),
    // The ledger's: an entry's upload actions, and a unit's of a file, when one of them is reversed
    // (server/store/ledger/mongo-totals.ts).
    c.audit.createIndex({ fileId: 1, 'unit.id': 1, userId: 1 }, { name: 'upload_entry' }),
  ]);
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class MongoAuditLog implements AuditLog {
  constructor(private readonly c: AuditCollections) {}

  async append(e: AuditEvent): Promise<void> {
    await this.c.audit.insertOne({ _id: new ObjectId(), ...e });
  }

  async appendMany(events: readonly AuditEvent[]): Promise<void> {
    if (events.length > 0)
      await this.c.audit.insertMany(
        events.map((e) => ({ _id: new ObjectId(), ...e })),
        { ordered: true },
      );
  }

  async appendOnce(events: ReadonlyArray<{ key: string; event: AuditEvent }>): Promise<void> {
    if (events.length === 0) return;
    try {
      // The key is the id (prefixed apart from the ledger's upload keys, which share the collection).
      await this.c.audit.insertMany(
        events.map(({ key, event }) => ({ _id: `step:${key}`, ...event })),
        { ordered: false },
      );
    } catch (err) {
      // Those appended before are refused by their id; any other failure is one.
      const errors = (err as { writeErrors?: Array<{ code?: number }> | { code?: number } }).writeErrors;
      const list = Array.isArray(errors) ? errors : errors ? [errors] : [];
      if (list.length === 0 || list.some((e) => e.code !== 11000)) throw err;
    }
  }

  async search(q: AuditSearch): Promise<{ items: Array<AuditEvent & { id: string }>; total: number }> {
    const filter = searchFilter(q);
    const [total, docs] = await Promise.all([
      this.c.audit.countDocuments(filter),
      this.c.audit.find(filter).sort(NEWEST_FIRST).skip(q.offset).limit(q.limit).toArray(),
    ]);
    return { total, items: docs.map(auditEvent) };
  }

  async *searchBatches(
    q: Omit<AuditSearch, 'limit' | 'offset'>,
    batch: number,
  ): AsyncGenerator<{ items: Array<AuditEvent & { id: string }>; total: number }> {
    const filter = searchFilter(q);
    const total = await this.c.audit.countDocuments(filter);
    // One cursor, `batch` documents a fetch, closed however the iteration ends.
    const cursor = this.c.audit.find(filter).sort(NEWEST_FIRST).batchSize(batch);
    try {
      let items: Array<AuditEvent & { id: string }> = [];
      let sent = false;
      for await (const doc of cursor) {
        items.push(auditEvent(doc));
        if (items.length === batch) {
          const page = { items, total };
          items = [];
          sent = true;
          yield page;
        }
      }
      if (items.length > 0 || !sent) yield { items, total };
    } finally {
      await cursor.close();
    }
  }
}

/** Newest first; events of the same instant by id, the later made first. */
const NEWEST_FIRST = { at: -1, _id: -1 } as const;

function searchFilter(q: Omit<AuditSearch, 'limit' | 'offset'>): Filter<AuditDoc> {
  const filter: Filter<AuditDoc> = {};
  if (q.from || q.to) filter.at = { ...(q.from && { $gte: q.from }), ...(q.to && { $lt: q.to }) };
  if (q.action) filter.action = q.action;
  if (q.actions) filter.$and = [{ action: { $in: [...q.actions] } }];
  if (q.userName) filter.userName = q.userName;
  if (q.unit?.city) filter['unit.city'] = q.unit.city;
  if (q.unit?.county) filter['unit.county'] = q.unit.county;
  if (q.unit?.town) filter['unit.town'] = q.unit.town;
  if (q.text) {
    const pattern = new RegExp(escapeRegex(q.text), 'i');
    filter.$or = [{ fileName: pattern }, { detail: pattern }];
  }
  return filter;
}

const auditEvent = (d: AuditDoc): AuditEvent & { id: string } => ({
  id: typeof d._id === 'string' ? d._id : d._id.toHexString(),
  at: d.at,
  action: d.action,
  userId: d.userId,
  userName: d.userName,
  unit: d.unit,
  address: d.address,
  fileId: d.fileId,
  fileName: d.fileName,
  detail: d.detail,
  note: storedAuditNote(d.note),
});
