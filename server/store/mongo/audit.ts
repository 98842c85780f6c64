import { ObjectId, type Filter } from 'mongodb';
import type { AuditEvent, AuditLog, AuditSearch } from '../port.js';
import type { AuditDoc, Collections } from './collections.js';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export class MongoAuditLog implements AuditLog {
  constructor(private readonly c: Collections) {}

  async append(e: AuditEvent): Promise<void> {
    await this.c.audit.insertOne({ _id: new ObjectId(), ...e });
  }

  async appendMany(events: readonly AuditEvent[]): Promise<void> {
    if (events.length > 0) await this.c.audit.insertMany(events.map((e) => ({ _id: new ObjectId(), ...e })), { ordered: true });
  }

  async search(q: AuditSearch): Promise<{ items: Array<AuditEvent & { id: string }>; total: number }> {
    const filter: Filter<AuditDoc> = {};
    if (q.from || q.to) filter.at = { ...(q.from && { $gte: q.from }), ...(q.to && { $lt: q.to }) };
    if (q.action) filter.action = q.action;
    if (q.userName) filter.userName = q.userName;
    if (q.unit?.city) filter['unit.city'] = q.unit.city;
    if (q.unit?.county) filter['unit.county'] = q.unit.county;
    if (q.unit?.town) filter['unit.town'] = q.unit.town;
    if (q.text) {
      const pattern = new RegExp(escapeRegex(q.text), 'i');
      filter.$or = [{ fileName: pattern }, { detail: pattern }];
    }
    const [total, docs] = await Promise.all([
      this.c.audit.countDocuments(filter),
      this.c.audit.find(filter).sort({ at: -1, _id: -1 }).skip(q.offset).limit(q.limit).toArray(),
    ]);
    return {
      total,
      items: docs.map((d) => ({
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
      })),
    };
  }
}
