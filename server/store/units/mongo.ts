import type { Db, Filter } from 'mongodb';
import { ConflictError } from '../../errors.js';
import { containsPattern, escapeRegex, isDuplicateKey } from '../mongo/documents.js';
import { sortKeyOf, type DirectoryUnit, type UnitQuery, type UnitStore } from './port.js';

/** A unit of the directory (`units`): `_id` is its id; `sortKey` orders lists (sortKeyOf). */
export type UnitDoc = Omit<DirectoryUnit, 'id'> & { _id: string; sortKey: string };

export function unitCollections(db: Db) {
  return { units: db.collection<UnitDoc>('units') };
}

export type UnitCollections = ReturnType<typeof unitCollections>;

export async function createUnitIndexes(c: UnitCollections): Promise<void> {
  await Promise.all([
    c.units.createIndex({ parentId: 1, name: 1 }, { unique: true, name: 'sibling_name' }),
    c.units.createIndex({ parentId: 1, sortKey: 1 }, { name: 'children' }),
    // Prefix regexes on the lineage (a subtree) use this index.
    c.units.createIndex({ lineage: 1 }, { name: 'lineage' }),
    c.units.createIndex({ name: 1 }, { name: 'name' }),
  ]);
}

const docOf = (u: DirectoryUnit): UnitDoc => {
  const { id, ...rest } = u;
  return { _id: id, ...rest, sortKey: sortKeyOf(u) };
};

const unitOf = ({ _id, code, name, level, parentId, path, lineage }: UnitDoc): DirectoryUnit => ({
  id: _id,
  code,
  name,
  level,
  parentId,
  path,
  lineage,
});

const under = (lineage: string) => new RegExp(`^${escapeRegex(lineage)}`);

const taken = (name: string) => new ConflictError(`There is a unit named "${name}" there already.`, 'unit_name_taken');

export class MongoUnitStore implements UnitStore {
  constructor(private readonly c: UnitCollections) {}

  async addMissing(units: DirectoryUnit[]): Promise<number> {
    if (units.length === 0) return 0;
    const r = await this.c.units.bulkWrite(
      units.map((u) => ({ updateOne: { filter: { _id: u.id }, update: { $setOnInsert: docOf(u) }, upsert: true } })),
      { ordered: false },
    );
    return r.upsertedCount;
  }

  async add(unit: DirectoryUnit): Promise<void> {
    try {
      await this.c.units.insertOne(docOf(unit));
    } catch (err) {
      if (isDuplicateKey(err)) throw taken(unit.name);
      throw err;
    }
  }

  async get(id: string): Promise<DirectoryUnit | undefined> {
    const doc = await this.c.units.findOne({ _id: id });
    return doc ? unitOf(doc) : undefined;
  }

  async getMany(ids: string[]): Promise<DirectoryUnit[]> {
    return ids.length === 0 ? [] : (await this.c.units.find({ _id: { $in: ids } }).toArray()).map(unitOf);
  }

  async find(q: UnitQuery): Promise<{ items: DirectoryUnit[]; total: number }> {
    const filter: Filter<UnitDoc> = {};
    if (q.within !== undefined) filter.lineage = under(q.within);
    if (q.parentId !== undefined) filter.parentId = q.parentId;
    if (q.level) filter.level = q.level;
    if (q.q) filter.$or = [{ name: containsPattern(q.q) }, { code: new RegExp(`^${escapeRegex(q.q)}`) }];
    const [docs, total] = await Promise.all([
      this.c.units.find(filter).sort({ sortKey: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
      this.c.units.countDocuments(filter),
    ]);
    return { items: docs.map(unitOf), total };
  }

  async ids(query: { within?: string; part?: string }): Promise<string[]> {
    const filter: Filter<UnitDoc> = {};
    if (query.within !== undefined) filter.lineage = under(query.within);
    const part = query.part;
    if (part === undefined)
      return (await this.c.units.find(filter, { projection: { _id: 1 } }).toArray()).map((d) => d._id);
    // A path contains the part only where one of its names contains the part's longest piece
    // between "/"s: those units (and the codes starting with it) are the candidates, checked whole here.
    const longest = part.split('/').reduce((a, b) => (b.length > a.length ? b : a), '');
    if (longest !== '')
      filter.$or = [{ path: containsPattern(longest) }, { code: new RegExp(`^${escapeRegex(part)}`) }];
    const candidates = await this.c.units.find(filter, { projection: { _id: 1, path: 1, code: 1 } }).toArray();
    return candidates.filter((u) => u.path.join('/').includes(part) || u.code?.startsWith(part)).map((u) => u._id);
  }

  async named(name: string): Promise<DirectoryUnit[]> {
    return (await this.c.units.find({ name }).sort({ sortKey: 1 }).toArray()).map(unitOf);
  }

  countDivisionsWithin(lineage: string): Promise<number> {
    return this.c.units.countDocuments({ lineage: under(lineage), code: { $ne: null } });
  }

  async rename(id: string, name: string): Promise<void> {
    const unit = await this.get(id);
    if (!unit) return;
    try {
      await this.c.units.updateOne({ _id: id }, { $set: { name, sortKey: sortKeyOf({ ...unit, name }) } });
    } catch (err) {
      if (isDuplicateKey(err)) throw taken(name);
      throw err;
    }
    // Without transactions the paths below follow a moment later; renaming again repairs an interrupted one.
    await this.c.units.updateMany(
      { lineage: under(unit.lineage) },
      { $set: { [`path.${unit.path.length - 1}`]: name } },
    );
  }
}
