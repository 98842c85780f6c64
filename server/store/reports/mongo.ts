import type { Collection, Document, ObjectId } from 'mongodb';
import type * as Rows from '../../../shared/reports.js';
import { UPLOADERS_PER_ROW } from '../../../shared/reports.js';
import type { CatalogCollections, CatalogDoc } from '../mongo/catalog-documents.js';
import { reportUnitFromDoc, type LedgerCollections, type LedgerDoc } from '../mongo/ledger-documents.js';
import { containsPattern, toNumber } from '../mongo/documents.js';
import type { NearPairDoc, PairCollections, PairReviewDoc } from '../mongo/pair-documents.js';
import type {
  Batches,
  CollisionReportQuery,
  CrossUnitReportQuery,
  NearDuplicateReportQuery,
  Page,
  RepeatReportQuery,
  ReportFilter,
  ReportPaging,
  Reports,
  SavingsReportQuery,
  StoredCrossUnitRow,
  StoredRepeatRow,
  Unpaged,
} from './port.js';

/** The collections the reports read: the ledger and its day tallies, the catalog, the near-duplicate pairs. */
export type ReportCollections = LedgerCollections & CatalogCollections & PairCollections;

/**
 * The reports as aggregation pipelines, computed by the database: $match (indexed fields first),
 * $group, $sort with a unique tie-break, $skip/$limit, and $lookup (localField/foreignField) to
 * the catalog for names and lengths. Only stages and operators of MongoDB 4.4 that
 * mongo-java-server also runs ($addFields, not $set; no $facet, $setWindowFields or $dateTrunc).
 * The semantics are those of the embedded store's SQL (server/store/reports/embedded.ts).
 */

type Unit = Pick<LedgerDoc, 'UploadGeography' | 'UploadGeoAddress'>;
type Long = { toNumber(): number } | number;

/** Ledger entries with an upload in [from, to), by units of the subtree. */
function ledgerMatch(f: ReportFilter): Document {
  return {
    ...(f.from && { LastUploadTime: { $gte: f.from } }),
    ...(f.to && { UploadTime: { $lt: f.to } }),
    ...subtreeMatch(f, {
      city: 'UploadGeoAddress.CityName',
      county: 'UploadGeoAddress.CountyName',
      town: 'UploadGeoAddress.TownName',
    }),
  };
}

function subtreeMatch(f: ReportFilter, fields: { city: string; county: string; town: string }): Document {
  if (!f.unit) return {};
  return {
    [fields.city]: f.unit.city,
    ...(f.unit.county ? { [fields.county]: f.unit.county } : {}),
    ...(f.unit.town ? { [fields.town]: f.unit.town } : {}),
  };
}

/** Joins the catalog entry (`file`) of `localField`; rows without one drop out (an inner join). */
function joinCatalog(c: ReportCollections, localField: string): Document[] {
  return [
    { $lookup: { from: c.catalog.collectionName, localField, foreignField: '_id', as: 'file' } },
    { $unwind: '$file' },
  ];
}

/** $sort by a sort field's columns, then a unique key ascending so pages never overlap. */
function sortStage(
  columns: Record<string, readonly string[]>,
  paging: Pick<ReportPaging, 'sort' | 'order'>,
  tieBreak: readonly string[],
): Document {
  const fields = columns[paging.sort];
  if (!fields) throw new Error(`unknown sort field ${paging.sort}`);
  const sort: Record<string, 1 | -1> = {};
  for (const f of fields) sort[f] = paging.order === 'asc' ? 1 : -1;
  for (const f of tieBreak) sort[f] ??= 1;
  return { $sort: sort };
}

/** The unit of a group of entries: the greatest, so the choice is the same on every run. */
const groupUnit = { $max: { UploadGeography: '$UploadGeography', UploadGeoAddress: '$UploadGeoAddress' } };

/** Uploads of a group of entries, and when they began and ended. */
const uploadSpan = {
  uploads: { $sum: '$UploadCount' },
  first: { $min: '$UploadTime' },
  last: { $max: '$LastUploadTime' },
};

const iso = (d: Date) => d.toISOString();

/** A report's rows as one pipeline: its stages, their order, stages for the rows picked, and each row's item. */
interface Pipeline<Item> {
  stages: Document[];
  sort: Document;
  after: Document[];
  item: (row: Document) => Item;
}

/** A file of the cross-unit table, before its units are read. */
type CrossUnitFileDoc = {
  _id: ObjectId;
  units: number;
  users: number;
  uploads: number;
  first: Date;
  last: Date;
  file: CatalogDoc;
};

/** Sums of the savings table, as the pipeline reads them. */
type SavingsFigureDoc = { uploads: number; savedUploads: number; savedBytes: Long };
const savingsFigures = (r: SavingsFigureDoc): Rows.SavingsFigures => ({
  uploads: r.uploads,
  savedUploads: r.savedUploads,
  savedBytes: toNumber(r.savedBytes),
});
/** Sums of sums (savings per row, or over all rows). */
const SUMS_AGAIN = {
  uploads: { $sum: '$uploads' },
  savedUploads: { $sum: '$savedUploads' },
  savedBytes: { $sum: '$savedBytes' },
};

/** A near-duplicate pair with its files and review. */
type PairDoc = NearPairDoc & { a: CatalogDoc; b: CatalogDoc; review: PairReviewDoc[] };

export class MongoReports implements Reports {
  constructor(private readonly c: ReportCollections) {}

  /**
   * One page of `stages` (which yield every row) and the number of rows over all pages; the count
   * runs only when the page does not tell it (a full page, or one past the end).
   */
  private async page<Row extends Document>(
    collection: Pick<Collection, 'aggregate'>,
    stages: Document[],
    sort: Document,
    paging: ReportPaging,
    after: Document[] = [],
  ) {
    const rows = await collection
      .aggregate<Row>([...stages, sort, { $skip: paging.offset }, { $limit: paging.limit }, ...after], {
        allowDiskUse: true,
      })
      .toArray();
    if (rows.length < paging.limit && (rows.length > 0 || paging.offset === 0))
      return { rows, total: paging.offset + rows.length };
    const [count] = await collection
      .aggregate<{ n: number }>([...stages, { $count: 'n' }], { allowDiskUse: true })
      .toArray();
    return { rows, total: count?.n ?? 0 };
  }

  /**
   * Every row of `stages` in `sort`'s order, `batch` at a time, each batch turned into items as it
   * is read: one cursor (no $skip re-reading the rows before a page), fetched `batch` documents
   * at a time and closed when the iteration ends, however it ends. The number of rows is counted
   * first (a second run of `stages`).
   */
  private async *batches<Row extends Document, Item>(
    collection: Pick<Collection, 'aggregate'>,
    stages: Document[],
    sort: Document,
    after: Document[],
    batch: number,
    items: (rows: Row[]) => Item[] | Promise<Item[]>,
  ): AsyncGenerator<Page<Item>> {
    const [count] = await collection
      .aggregate<{ n: number }>([...stages, { $count: 'n' }], { allowDiskUse: true })
      .toArray();
    const total = count?.n ?? 0;
    const cursor = collection.aggregate<Row>([...stages, sort, ...after], { allowDiskUse: true, batchSize: batch });
    try {
      let rows: Row[] = [];
      let sent = false;
      for await (const row of cursor) {
        rows.push(row);
        if (rows.length === batch) {
          const page = { items: await items(rows), total };
          rows = [];
          sent = true;
          yield page;
        }
      }
      if (rows.length > 0 || !sent) yield { items: await items(rows), total };
    } finally {
      await cursor.close();
    }
  }

  async repeatUploaders(q: RepeatReportQuery): Promise<Page<StoredRepeatRow>> {
    const p = this.repeatPipeline(q);
    const { rows, total } = await this.page<Document>(this.c.ledger, p.stages, p.sort, q, p.after);
    return { total, items: rows.map(p.item) };
  }

  repeatUploaderBatches(q: Unpaged<RepeatReportQuery>, batch: number): Batches<StoredRepeatRow> {
    const p = this.repeatPipeline(q);
    return this.batches<Document, StoredRepeatRow>(this.c.ledger, p.stages, p.sort, p.after, batch, (rows) =>
      rows.map(p.item),
    );
  }

  /** The repeat uploaders' rows: stages, their order, stages for the rows picked, and each row's item. */
  private repeatPipeline(q: Unpaged<RepeatReportQuery>): Pipeline<StoredRepeatRow> {
    const match = {
      ...ledgerMatch(q),
      UploadCount: { $gte: q.min },
      ...(q.userName ? { UserName: q.userName } : {}),
      ...(q.unitId ? { 'UploadGeography.UploadGeoNameID': q.unitId } : {}),
      ...(q.fileName ? { UploadFileName: containsPattern(q.fileName) } : {}),
    };
    // Copies inside one upload (CopyCount, absent: none) counted as uploads, or left out.
    const copies = { $ifNull: ['$CopyCount', 0] };
    const exclude = q.copies === 'exclude';
    const uploads = exclude ? { $subtract: ['$UploadCount', copies] } : '$UploadCount';
    const resends = { $subtract: [{ $subtract: ['$UploadCount', 1] }, copies] };
    // Without copies, the minimum holds for the uploads left (UploadCount's own match still picks by index).
    const first: Document[] = [{ $match: match }];
    if (exclude) first.push({ $match: { $expr: { $gte: [uploads, q.min] } } });
    const entries = [...first, ...joinCatalog(this.c, 'UploadFileID')];
    if (q.group === 'entry') {
      // The catalog is read for the page's entries only, unless the sort needs every length first.
      const bySize = q.sort === 'fileLength';
      type Row = LedgerDoc & { _id: ObjectId; file: CatalogDoc; uploads: number; copies: number; resends: number };
      const counts = { $addFields: { uploads, copies, resends } };
      const sort = sortStage(
        {
          // With copies, by the stored count (its index); without, by the uploads left.
          uploadCount: [exclude ? 'uploads' : 'UploadCount'],
          lastUploadTime: ['LastUploadTime'],
          firstUploadTime: ['UploadTime'],
          userName: ['UserName'],
          fileName: ['UploadFileName'],
          fileLength: ['file.fileLength'],
        },
        q,
        // Entries in the order they were first recorded (a client-made ObjectId, see ledger/mongo.ts).
        ['_id'],
      );
      return {
        stages: [...(bySize ? entries : first), ...(exclude ? [counts] : [])],
        sort,
        after: [...(bySize ? [] : joinCatalog(this.c, 'UploadFileID')), ...(exclude ? [] : [counts])],
        item: (doc) => {
          const r = doc as Row;
          return {
            userId: r.UserID,
            userName: r.UserName,
            unit: reportUnitFromDoc(r),
            fileId: r.UploadFileID.toHexString(),
            fileName: r.UploadFileName,
            fileLength: toNumber(r.file.fileLength),
            uploadCount: r.uploads,
            copies: r.copies,
            resends: r.resends,
            firstUploadTime: iso(r.UploadTime),
            lastUploadTime: iso(r.LastUploadTime),
          };
        },
      };
    }
    const byUser = q.group === 'user';
    type Row = {
      _id: { user?: string; unit: string };
      userName: string;
      who: Unit;
      users: number;
      files: number;
      uploads: number;
      repeats: number;
      repeatBytes: Long;
      copies: number;
      resends: number;
      first: Date;
      last: Date;
    };
    const repeats = { $subtract: [uploads, 1] };
    // Per unit, its files and its accounts are each counted once with no list of either (a unit's
    // file ids outgrow one document near a million files): every entry passes twice, as its file
    // (weight 1) and as its account (weight 0), grouped per unit and file or per unit and account,
    // then per unit; the sums are the file passes' only. A user has one entry per file and unit:
    // counting a user's entries counts its files.
    const twice = [
      {
        $addFields: {
          pass: [
            { file: '$UploadFileID', n: 1 },
            { user: '$UserID', n: 0 },
          ],
        },
      },
      { $unwind: '$pass' },
    ];
    const weighed = (sum: Document | string) => (byUser ? sum : { $multiply: ['$pass.n', sum] });
    const groups = [
      ...entries,
      ...(byUser ? [] : twice),
      {
        $group: {
          _id: byUser
            ? { user: '$UserID', unit: '$UploadGeography.UploadGeoNameID' }
            : { unit: '$UploadGeography.UploadGeoNameID', file: '$pass.file', user: '$pass.user' },
          userName: { $max: '$UserName' },
          who: groupUnit,
          files: byUser ? { $sum: 1 } : { $max: '$pass.n' },
          uploads: { $sum: weighed(uploads) },
          first: uploadSpan.first,
          last: uploadSpan.last,
          repeats: { $sum: weighed(repeats) },
          repeatBytes: { $sum: weighed({ $multiply: [repeats, '$file.fileLength'] }) },
          copies: { $sum: weighed(copies) },
          resends: { $sum: weighed(resends) },
        },
      },
      ...(byUser
        ? []
        : [
            {
              $group: {
                _id: { unit: '$_id.unit' },
                userName: { $max: '$userName' },
                who: { $max: '$who' },
                users: { $sum: { $subtract: [1, '$files'] } },
                files: { $sum: '$files' },
                uploads: { $sum: '$uploads' },
                first: { $min: '$first' },
                last: { $max: '$last' },
                repeats: { $sum: '$repeats' },
                repeatBytes: { $sum: '$repeatBytes' },
                copies: { $sum: '$copies' },
                resends: { $sum: '$resends' },
              },
            },
          ]),
    ];
    const sort = sortStage(
      {
        repeatUploads: ['repeats'],
        files: ['files'],
        users: ['users'],
        uploads: ['uploads'],
        repeatBytes: ['repeatBytes'],
        lastUploadTime: ['last'],
        firstUploadTime: ['first'],
        userName: ['userName'],
      },
      q,
      byUser ? ['_id.user', '_id.unit'] : ['_id.unit'],
    );
    return {
      stages: groups,
      sort,
      after: [],
      item: (doc) => {
        const r = doc as Row;
        const totals = {
          unit: reportUnitFromDoc(r.who),
          files: r.files,
          uploads: r.uploads,
          repeatUploads: r.repeats,
          repeatBytes: toNumber(r.repeatBytes),
          copies: r.copies,
          resends: r.resends,
          firstUploadTime: iso(r.first),
          lastUploadTime: iso(r.last),
        };
        return byUser ? { userId: r._id.user!, userName: r.userName, ...totals } : { ...totals, users: r.users };
      },
    };
  }

  async crossUnit(q: CrossUnitReportQuery): Promise<Page<StoredCrossUnitRow>> {
    const p = this.crossUnitPipeline(q);
    const { rows, total } = await this.page<CrossUnitFileDoc>(this.c.ledger, p.stages, p.sort, q, p.after);
    return { total, items: await this.crossUnitItems(q, rows) };
  }

  crossUnitBatches(q: Unpaged<CrossUnitReportQuery>, batch: number): Batches<StoredCrossUnitRow> {
    const p = this.crossUnitPipeline(q);
    return this.batches<CrossUnitFileDoc, StoredCrossUnitRow>(this.c.ledger, p.stages, p.sort, p.after, batch, (rows) =>
      this.crossUnitItems(q, rows),
    );
  }

  /** The cross-unit table's files, without their units. */
  private crossUnitPipeline(q: Unpaged<CrossUnitReportQuery>): Omit<Pipeline<never>, 'item'> {
    const match = ledgerMatch(q);
    const files: Document[] = [
      { $match: match },
      {
        $group: {
          _id: '$UploadFileID',
          // Lists bounded by the directory, not by the archive's size: a file's units (at most the
          // units of the directory, a province's few thousand) and its accounts (at most every
          // account, 100,000 for a province: about 3 MB of ids, well within one document).
          units: { $addToSet: '$UploadGeography.UploadGeoNameID' },
          users: { $addToSet: '$UserID' },
          ...uploadSpan,
        },
      },
      { $addFields: { units: { $size: '$units' }, users: { $size: '$users' } } },
      { $match: { units: { $gte: q.min } } },
    ];
    // The catalog is read for the page's files only, unless its name or size filters or sorts them.
    const catalogFirst = !!q.fileName || q.sort === 'fileName' || q.sort === 'fileLength';
    if (catalogFirst) {
      // The name filter is on the stored name, a property of the file: it can wait for the grouping.
      files.push(
        ...joinCatalog(this.c, '_id'),
        ...(q.fileName ? [{ $match: { 'file.fileName': containsPattern(q.fileName) } }] : []),
      );
    }
    const sort = sortStage(
      {
        units: ['units'],
        uploads: ['uploads'],
        users: ['users'],
        fileLength: ['file.fileLength'],
        lastUploadTime: ['last'],
        firstUploadTime: ['first'],
        fileName: ['file.fileName'],
      },
      q,
      ['_id'],
    );
    return { stages: files, sort, after: catalogFirst ? [] : joinCatalog(this.c, '_id') };
  }

  /** The table's rows of these files, each with its units (the filters' entries). */
  private async crossUnitItems(
    q: Unpaged<CrossUnitReportQuery>,
    rows: CrossUnitFileDoc[],
  ): Promise<StoredCrossUnitRow[]> {
    const match = ledgerMatch(q);
    // The units of these files only, with the same filters.
    type UnitRow = {
      _id: { file: ObjectId; unit: string };
      who: Unit;
      userNames: string[];
      uploads: number;
      first: Date;
      last: Date;
    };
    const unitRows =
      rows.length === 0
        ? []
        : await this.c.ledger
            .aggregate<UnitRow>([
              { $match: { ...match, UploadFileID: { $in: rows.map((r) => r._id) } } },
              {
                $group: {
                  _id: { file: '$UploadFileID', unit: '$UploadGeography.UploadGeoNameID' },
                  who: groupUnit,
                  // Bounded by the unit's accounts.
                  userNames: { $addToSet: '$UserName' },
                  ...uploadSpan,
                },
              },
              { $sort: { first: 1, '_id.unit': 1 } },
            ])
            .toArray();
    const uploaders = new Map<string, StoredCrossUnitRow['uploaders']>();
    for (const u of unitRows) {
      const fileId = u._id.file.toHexString();
      const list = uploaders.get(fileId) ?? [];
      if (list.length === UPLOADERS_PER_ROW) continue;
      list.push({
        unit: reportUnitFromDoc(u.who),
        userNames: u.userNames.sort(),
        uploads: u.uploads,
        firstUploadTime: iso(u.first),
        lastUploadTime: iso(u.last),
      });
      uploaders.set(fileId, list);
    }
    return rows.map((r) => ({
      fileId: r._id.toHexString(),
      fileName: r.file.fileName,
      fileLength: toNumber(r.file.fileLength),
      units: r.units,
      users: r.users,
      uploads: r.uploads,
      firstUploadTime: iso(r.first),
      lastUploadTime: iso(r.last),
      uploaders: uploaders.get(r._id.toHexString()) ?? [],
    }));
  }

  async savings(
    q: SavingsReportQuery,
  ): Promise<Page<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> & { summary: Rows.SavingsFigures }> {
    const p = this.savingsPipeline(q);
    const days = this.c.uploadDays;
    const [rows, [all]] = await Promise.all([
      days.aggregate([...p.stages, p.sort, { $skip: q.offset }, { $limit: q.limit }], { allowDiskUse: true }).toArray(),
      days
        .aggregate<SavingsFigureDoc & { total: number }>(
          [...p.stages, { $group: { _id: null, total: { $sum: 1 }, ...SUMS_AGAIN } }],
          { allowDiskUse: true },
        )
        .toArray(),
    ]);
    return {
      total: all?.total ?? 0,
      summary: all ? savingsFigures(all) : { uploads: 0, savedUploads: 0, savedBytes: 0 },
      items: rows.map(p.item),
    };
  }

  savingsBatches(q: Unpaged<SavingsReportQuery>, batch: number): Batches<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> {
    const p = this.savingsPipeline(q);
    return this.batches(this.c.uploadDays, p.stages, p.sort, p.after, batch, (rows) => rows.map(p.item));
  }

  /** The savings table's rows. */
  private savingsPipeline(q: Unpaged<SavingsReportQuery>): Pipeline<Rows.SavingsUnitRow | Rows.SavingsPeriodRow> {
    const match = {
      ...(q.fromDay || q.toDay
        ? { Day: { ...(q.fromDay ? { $gte: q.fromDay } : {}), ...(q.toDay ? { $lte: q.toDay } : {}) } }
        : {}),
      ...subtreeMatch(q, { city: 'CityName', county: 'CountyName', town: 'TownName' }),
    };
    // Per unit: one level below the filter (a town filter keeps the town itself).
    const key: Record<string, string> =
      q.group === 'day'
        ? { period: '$Day' }
        : q.group === 'week'
          ? { period: '$Week' }
          : q.group === 'month'
            ? { period: '$Month' }
            : {
                city: '$CityName',
                ...(q.unit && { county: '$CountyName' }),
                ...(q.unit?.county && { town: '$TownName' }),
              };
    const sums = {
      uploads: { $sum: '$Uploads' },
      savedUploads: { $sum: '$SavedUploads' },
      savedBytes: { $sum: { $multiply: ['$SavedUploads', '$FileLength'] } },
    };
    const groups: Document[] = q.fileName
      ? [
          // Per file first, so the catalog is read once per file and group, not once per day.
          { $match: match },
          { $group: { _id: { key, file: '$UploadFileID' }, ...sums } },
          ...joinCatalog(this.c, '_id.file'),
          { $match: { 'file.fileName': containsPattern(q.fileName) } },
          { $group: { _id: '$_id.key', ...SUMS_AGAIN } },
        ]
      : [{ $match: match }, { $group: { _id: key, ...sums } }];
    const keyFields = Object.keys(key).map((k) => `_id.${k}`);
    const sort = sortStage(
      {
        savedBytes: ['savedBytes'],
        savedUploads: ['savedUploads'],
        uploads: ['uploads'],
        unit: keyFields,
        period: keyFields,
      },
      q,
      keyFields,
    );
    type Row = SavingsFigureDoc & {
      _id: { period?: string; city?: string; county?: string | null; town?: string | null };
    };
    return {
      stages: groups,
      sort,
      after: [],
      item: (doc) => {
        const r = doc as Row;
        return q.group === 'unit'
          ? {
              city: r._id.city!,
              ...('county' in key && { county: r._id.county ?? null }),
              ...('town' in key && { town: r._id.town ?? null }),
              ...savingsFigures(r),
            }
          : { period: r._id.period!, ...savingsFigures(r) };
      },
    };
  }

  async collisions(q: CollisionReportQuery): Promise<Page<Rows.CollisionRow>> {
    const p = this.collisionPipeline(q);
    const { rows, total } = await this.page<Document>(this.c.catalog, p.stages, p.sort, q, p.after);
    return { total, items: rows.map(p.item) };
  }

  collisionBatches(q: Unpaged<CollisionReportQuery>, batch: number): Batches<Rows.CollisionRow> {
    const p = this.collisionPipeline(q);
    return this.batches(this.c.catalog, p.stages, p.sort, p.after, batch, (rows) => rows.map(p.item));
  }

  /** The collisions table's rows. */
  private collisionPipeline(q: Unpaged<CollisionReportQuery>): Pipeline<Rows.CollisionRow> {
    const match = {
      md5Collision: true,
      ...(q.from || q.to ? { uploadDate: { ...(q.from && { $gte: q.from }), ...(q.to && { $lt: q.to }) } } : {}),
      ...(q.fileName ? { fileName: containsPattern(q.fileName) } : {}),
    };
    // Uploads counted within the unit subtree; with a subtree, only files it uploaded.
    const inSubtree = Object.entries(subtreeMatch(q, { city: 'CityName', county: 'CountyName', town: 'TownName' })).map(
      ([field, value]) => ({
        $eq: [`$$e.UploadGeoAddress.${field}`, value],
      }),
    );
    const entries =
      inSubtree.length > 0 ? { $filter: { input: '$entries', as: 'e', cond: { $and: inSubtree } } } : '$entries';
    const files = [
      { $match: match },
      {
        $lookup: { from: this.c.ledger.collectionName, localField: '_id', foreignField: 'UploadFileID', as: 'entries' },
      },
      { $addFields: { uploads: { $sum: { $map: { input: entries, as: 'e', in: '$$e.UploadCount' } } } } },
      { $project: { entries: 0 } },
      { $match: { uploads: { $gte: q.min, ...(q.unit && { $gt: 0 }) } } },
    ];
    const sort = sortStage(
      {
        md5: ['fileMD5', 'uploadDate'],
        uploadDate: ['uploadDate'],
        fileLength: ['fileLength'],
        fileName: ['fileName'],
        uploads: ['uploads'],
      },
      q,
      ['_id'],
    );
    type Row = CatalogDoc & { uploads: number; sameMd5: number };
    return {
      stages: files,
      sort,
      after: [
        // Counted for the rows picked only.
        {
          $lookup: {
            from: this.c.catalog.collectionName,
            localField: 'fileMD5',
            foreignField: 'fileMD5',
            as: 'sameMd5',
          },
        },
        { $addFields: { sameMd5: { $size: '$sameMd5' } } },
      ],
      item: (doc) => {
        const r = doc as Row;
        return {
          md5: r.fileMD5,
          fileId: r._id.toHexString(),
          sha256: r.fileSHA256,
          fileLength: toNumber(r.fileLength),
          fileName: r.fileName,
          uploadDate: iso(r.uploadDate),
          uploads: r.uploads,
          filesWithMd5: r.sameMd5,
        };
      },
    };
  }

  async nearDuplicates(q: NearDuplicateReportQuery): Promise<Page<Rows.NearDuplicateRow>> {
    const p = this.nearDuplicatePipeline(q);
    const { rows, total } = await this.page<PairDoc>(this.c.nearPairs, p.stages, p.sort, q, p.after);
    return { total, items: await this.nearDuplicateItems(rows) };
  }

  nearDuplicateBatches(q: Unpaged<NearDuplicateReportQuery>, batch: number): Batches<Rows.NearDuplicateRow> {
    const p = this.nearDuplicatePipeline(q);
    return this.batches<PairDoc, Rows.NearDuplicateRow>(this.c.nearPairs, p.stages, p.sort, p.after, batch, (rows) =>
      this.nearDuplicateItems(rows),
    );
  }

  /** The near-duplicate pairs, with their files and reviews. */
  private nearDuplicatePipeline(q: Unpaged<NearDuplicateReportQuery>): Omit<Pipeline<never>, 'item'> {
    const match = {
      ...(q.from || q.to ? { foundAt: { ...(q.from && { $gte: q.from }), ...(q.to && { $lt: q.to }) } } : {}),
      ...(q.method ? { method: q.method } : {}),
    };
    // Pairs and their reviews share their _id ("<fileA>:<fileB>").
    const reviewed: Document[] = [
      { $lookup: { from: 'nearDuplicates.reviews', localField: '_id', foreignField: '_id', as: 'review' } },
      ...(q.status ? [{ $match: { review: q.status === 'open' ? { $size: 0 } : { $ne: [] } } }] : []),
    ];
    const subtree = subtreeMatch(q, {
      city: 'UploadGeoAddress.CityName',
      county: 'UploadGeoAddress.CountyName',
      town: 'UploadGeoAddress.TownName',
    });
    const pairs: Document[] = [
      { $match: match },
      ...reviewed,
      { $lookup: { from: this.c.catalog.collectionName, localField: 'fileA', foreignField: '_id', as: 'a' } },
      { $unwind: '$a' },
      { $lookup: { from: this.c.catalog.collectionName, localField: 'fileB', foreignField: '_id', as: 'b' } },
      { $unwind: '$b' },
      ...(q.fileName
        ? [
            {
              $match: {
                $or: [{ 'a.fileName': containsPattern(q.fileName) }, { 'b.fileName': containsPattern(q.fileName) }],
              },
            },
          ]
        : []),
      ...(q.unit
        ? [
            {
              $lookup: {
                from: this.c.ledger.collectionName,
                localField: 'fileA',
                foreignField: 'UploadFileID',
                as: 'aEntries',
              },
            },
            {
              $lookup: {
                from: this.c.ledger.collectionName,
                localField: 'fileB',
                foreignField: 'UploadFileID',
                as: 'bEntries',
              },
            },
            { $match: { $or: [{ aEntries: { $elemMatch: subtree } }, { bEntries: { $elemMatch: subtree } }] } },
            { $project: { aEntries: 0, bEntries: 0 } },
          ]
        : []),
    ];
    // A short text has no SimHash: sorted by distance, it comes after every pair that has one.
    const sort = sortStage({ foundAt: ['foundAt'], jaccard: ['jaccard'], hamming: ['hammingOrLast'] }, q, ['_id']);
    return {
      stages: [...pairs, { $addFields: { hammingOrLast: { $ifNull: ['$hamming', 65] } } }],
      sort,
      after: [],
    };
  }

  /** The table's rows of these pairs, each file with its units. */
  private async nearDuplicateItems(rows: PairDoc[]): Promise<Rows.NearDuplicateRow[]> {
    const ids = [...new Set(rows.flatMap((r) => [r.fileA.toHexString(), r.fileB.toHexString()]))];
    const entries = await this.c.ledger
      .find(
        { UploadFileID: { $in: rows.flatMap((r) => [r.fileA, r.fileB]) } },
        { projection: { UploadFileID: 1, UploadGeography: 1, UploadGeoAddress: 1 } },
      )
      .toArray();
    const units = new Map(ids.map((id) => [id, new Map<string, ReturnType<typeof reportUnitFromDoc>>()]));
    for (const e of entries) {
      const unit = reportUnitFromDoc(e);
      units.get(e.UploadFileID.toHexString())?.set(unit.id, unit);
    }
    const file = (doc: CatalogDoc, snippet: string): Rows.NearDuplicateFile => ({
      fileId: doc._id.toHexString(),
      fileName: doc.fileName,
      fileLength: toNumber(doc.fileLength),
      contentType: doc.contentType,
      uploadDate: iso(doc.uploadDate),
      units: [...(units.get(doc._id.toHexString())?.values() ?? [])].sort((x, y) =>
        x.id < y.id ? -1 : x.id > y.id ? 1 : 0,
      ),
      snippet,
    });
    return rows.map((r) => ({
      a: file(r.a, r.snippetA),
      b: file(r.b, r.snippetB),
      method: r.method,
      hamming: r.hamming,
      jaccard: r.jaccard,
      containment: r.containment,
      foundAt: iso(r.foundAt),
      review: r.review[0] ? { at: iso(r.review[0].at), userName: r.review[0].userName, note: r.review[0].note } : null,
      pages: r.pages ?? null,
    }));
  }
}
