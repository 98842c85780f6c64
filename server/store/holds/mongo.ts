import type { Db, Filter } from 'mongodb';
import type { HoldState } from '../../../shared/holds.js';
import { escapeRegex, isDuplicateKey } from '../mongo/documents.js';
import type { HeldFile, HeldUnit, HoldRecord, HoldStore, Person } from './port.js';

/**
 * One hold. `HeldFileIDs` and `HeldUnitID` exist only while it is active (unset by the lift, in
 * the same one-document update), so the indexes on them answer "which of these are held" alone.
 */
export interface HoldDoc {
  _id: string;
  Files: HeldFile[] | null;
  Unit: HeldUnit | null;
  HeldFileIDs?: string[];
  HeldUnitID?: string;
  Area: string;
  Reason: string;
  PlacedBy: Person;
  PlacedAt: Date;
  Active: boolean;
  LiftedBy: Person | null;
  LiftedAt: Date | null;
}

export function holdCollections(db: Db) {
  return { holds: db.collection<HoldDoc>('holds') };
}

export type HoldCollections = ReturnType<typeof holdCollections>;

export async function createHoldIndexes(c: HoldCollections): Promise<void> {
  await Promise.all([
    c.holds.createIndex({ HeldFileIDs: 1 }, { name: 'held_files', sparse: true }),
    c.holds.createIndex({ HeldUnitID: 1 }, { name: 'held_unit', sparse: true }),
    c.holds.createIndex({ PlacedAt: -1 }, { name: 'placed' }),
  ]);
}

const person = (p: Person): Person => ({ id: p.id, username: p.username });

const recordOf = (d: HoldDoc): HoldRecord => ({
  id: d._id,
  files: d.Files && d.Files.map((f) => ({ id: f.id, name: f.name })),
  unit: d.Unit && { id: d.Unit.id, name: d.Unit.name, path: d.Unit.path },
  area: d.Area,
  reason: d.Reason,
  placedBy: person(d.PlacedBy),
  placedAt: d.PlacedAt,
  liftedBy: d.LiftedBy && person(d.LiftedBy),
  liftedAt: d.LiftedAt,
});

const STATE_FILTER: Record<HoldState, Filter<HoldDoc>> = {
  active: { Active: true },
  lifted: { Active: false },
  all: {},
};

/** Every write is one document's. */
export class MongoHoldStore implements HoldStore {
  constructor(private readonly c: HoldCollections) {}

  async place(h: HoldRecord): Promise<boolean> {
    try {
      await this.c.holds.insertOne({
        _id: h.id,
        Files: h.files,
        Unit: h.unit,
        ...(h.files && { HeldFileIDs: [...new Set(h.files.map((f) => f.id))] }),
        ...(h.unit && { HeldUnitID: h.unit.id }),
        Area: h.area,
        Reason: h.reason,
        PlacedBy: person(h.placedBy),
        PlacedAt: h.placedAt,
        Active: true,
        LiftedBy: null,
        LiftedAt: null,
      });
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
    return true;
  }

  async lift(id: string, by: Person, at: Date): Promise<boolean> {
    const { modifiedCount } = await this.c.holds.updateOne(
      { _id: id, Active: true },
      { $set: { Active: false, LiftedBy: person(by), LiftedAt: at }, $unset: { HeldFileIDs: '', HeldUnitID: '' } },
    );
    return modifiedCount === 1;
  }

  async get(id: string): Promise<HoldRecord | undefined> {
    const doc = await this.c.holds.findOne({ _id: id });
    return doc ? recordOf(doc) : undefined;
  }

  async list(
    area: string | undefined,
    state: HoldState,
    page: { limit: number; offset: number },
  ): Promise<{ items: HoldRecord[]; total: number }> {
    const filter: Filter<HoldDoc> = {
      ...STATE_FILTER[state],
      ...(area && { Area: new RegExp(`^${escapeRegex(area)}`) }),
    };
    const [docs, total] = await Promise.all([
      this.c.holds.find(filter).sort({ PlacedAt: -1, _id: 1 }).skip(page.offset).limit(page.limit).toArray(),
      this.c.holds.countDocuments(filter),
    ]);
    return { items: docs.map(recordOf), total };
  }

  async covering(fileIds: readonly string[], unitIds: readonly string[]): Promise<HoldRecord[]> {
    const found = new Map<string, HoldRecord>();
    const files = [...new Set(fileIds)];
    const units = [...new Set(unitIds)];
    for (let at = 0; at < Math.max(files.length, units.length); at += 1000) {
      const [someFiles, someUnits] = [files.slice(at, at + 1000), units.slice(at, at + 1000)];
      const [byFile, byUnit] = await Promise.all([
        someFiles.length ? this.c.holds.find({ HeldFileIDs: { $in: someFiles } }).toArray() : [],
        someUnits.length ? this.c.holds.find({ HeldUnitID: { $in: someUnits } }).toArray() : [],
      ]);
      // Lifted between the index's answer and the read: not held any more.
      for (const doc of [...byFile, ...byUnit]) if (doc.Active) found.set(doc._id, recordOf(doc));
    }
    return [...found.values()];
  }

  async heldUnits(): Promise<string[]> {
    const units = await this.c.holds.distinct('HeldUnitID', { Active: true, HeldUnitID: { $exists: true } });
    return units.filter((u): u is string => typeof u === 'string');
  }
}
