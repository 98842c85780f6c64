import { ObjectId, type Filter } from 'mongodb';
import { storedAuditNote } from '../../../shared/audit-notes.js';
import type { AuditEvent, AuditLog, AuditSearch } from './port.js';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';

/**
 * The audit log's indexes. Each search's own ends in the log's order (NEWEST_FIRST), so a page
 * reads its events from the index in order and stops, where an index on the time alone left every
 * event the filter picks to be sorted for each page (15,000,000 at a province's decade).
 */
export async function createAuditIndexes(c: AuditCollections): Promise<void> {
  await Promise.all([
    c.audit.createIndex({ ...NEWEST_FIRST }, { name: 'newest' }),
    c.audit.createIndex({ action: 1, ...NEWEST_FIRST }, { name: 'action_newest' }),
    c.audit.createIndex({ userName: 1, ...NEWEST_FIRST }, { name: 'user_newest' }),
    c.audit.createIndex({ 'unit.city': 1, 'unit.county': 1, 'unit.town': 1, ...NEWEST_FIRST }, { name: 'unit_newest' }),
    // Upload actions whose counting a crash interrupted (the field exists only until it is done).
    c.audit.createIndex({ pending: 1, at: 1 }, { sparse: true, name: 'pending' }),
    // The ledger's: an entry's upload actions, and a unit's of a file, when one of them is reversed
    // (server/store/ledger/mongo-totals.ts).
    c.audit.createIndex({ fileId: 1, 'unit.id': 1, userId: 1 }, { name: 'upload_entry' }),
  ]);
  // Those of an earlier version, on the time without the order within it: the ones above serve all
  // they did. (Another instance starting at once may have dropped one first.)
  const existing = new Set((await c.audit.indexes()).map((index) => index.name));
  for (const name of ['at', 'action_at', 'user_at', 'unit_at'])
    if (existing.has(name))
      await c.audit.dropIndex(name).catch((err: unknown) => {
        if ((err as { codeName?: string }).codeName !== 'IndexNotFound') throw err;
      });
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class MongoAuditLog implements AuditLog {
  constructor(private readonly c: AuditCollections) {}

  async append(e: AuditEvent): Promise<void> {
    const order = new ObjectId();
    await this.c.audit.insertOne({ _id: order, order, ...e });
  }

  async appendMany(events: readonly AuditEvent[]): Promise<void> {
    if (events.length > 0)
      await this.c.audit.insertMany(
        events.map((e) => {
          const order = new ObjectId();
          return { _id: order, order, ...e };
        }),
        { ordered: true },
      );
  }

  async appendOnce(events: ReadonlyArray<{ key: string; event: AuditEvent }>): Promise<void> {
    if (events.length === 0) return;
    try {
      // The key is the id (prefixed apart from the ledger's upload keys, which share the collection).
      await this.c.audit.insertMany(
        events.map(({ key, event }) => ({ _id: `step:${key}`, order: new ObjectId(), ...event })),
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

/**
 * Newest first; events of the same millisecond by `order`, the later made first (a step's event
 * and an upload's have ids of their own, strings, which sort apart from ObjectIds), then by id
 * (events of before 2026-11-29 have no `order`).
 */
const NEWEST_FIRST = { at: -1, order: -1, _id: -1 } as const;

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
