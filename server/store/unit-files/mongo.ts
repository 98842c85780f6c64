import type { Document, Filter, ObjectId } from 'mongodb';
import { FILE_KIND_RULES, GENERIC_TYPES, type FileKind, type FileKindRule } from '../../../shared/file-types.js';
import { defaultFileOrder, FILE_NAMES_SHOWN, FILE_UPLOADERS_SHOWN, type FileSort } from '../../../shared/schemas.js';
import type { ViewScope } from '../ledger/port.js';
import { catalogEntryFromDoc, type CatalogCollections, type CatalogDoc } from '../mongo/catalog-documents.js';
import { containsPattern, escapeRegex } from '../mongo/documents.js';
import type { LedgerCollections, LedgerDoc, NameDoc } from '../mongo/ledger-documents.js';
import { namesScopeMatch, viewScopeMatch } from '../mongo/scopes.js';
import type { AuditCollections, AuditDoc } from '../mongo/audit-documents.js';
import { folderRange } from './folders.js';
import {
  viewScopeOf,
  type FolderPage,
  type FolderQuery,
  type UnitFileListing,
  type UnitFilesPage,
  type UnitFilesQuery,
  type UnitFiles,
  type ViewUpload,
  type ViewUploadsQuery,
} from './port.js';

/**
 * 本单位文件 on MongoDB: the ledger's entries and names (`userInfo.users`, `.names`) grouped per file
 * and looked up in the catalog (`fileInfo.files`), read only; the collections and their indexes are
 * their owners'.
 */
export class MongoUnitFiles implements UnitFiles {
  constructor(private readonly c: CatalogCollections & LedgerCollections & AuditCollections) {}

  async list(query: UnitFilesQuery, only?: ObjectId[]): Promise<UnitFilesPage> {
    const scope = viewScopeOf(query);
    const sort = query.sort ?? (scope ? 'lastUpload' : 'firstUpload');
    const order = query.order ?? defaultFileOrder(sort);
    const { rows, total } = scope
      ? await this.listInScope(query, scope, sort, order, only)
      : await this.listAll(query, sort, order, only);
    const ids = rows.map((r) => r.entry._id);
    const [names, uploaders] = await Promise.all([this.namesOf(ids, scope), this.uploadersOf(ids, scope)]);
    const items = rows.map(({ entry, ...sums }) => {
      const id = entry._id.toHexString();
      return {
        entry: catalogEntryFromDoc(entry),
        ...sums,
        ...(names.get(id) ?? { names: [], nameCount: 0 }),
        ...(uploaders.get(id) ?? { uploaders: [], uploaderCount: 0 }),
      };
    });
    return { items, total, sort, order };
  }

  /**
   * A unit's view (or a subtree's), grouped from its ledger entries by the database; the filters
   * pick files, the sums stay the view's (the semantics of the embedded store's SQL).
   */
  private async listInScope(
    q: UnitFilesQuery,
    scope: ViewScope,
    sort: FileSort,
    order: 'asc' | 'desc',
    only?: ObjectId[],
  ) {
    const match: Filter<LedgerDoc> = viewScopeMatch(scope);
    if (only) match.UploadFileID = { $in: only };
    const picked: Document = {
      ...(q.uploaderId !== undefined && { byUploader: true }),
      ...(q.kind && { ofKind: true }),
      ...((q.firstUploadFrom || q.firstUploadBefore) && {
        first: {
          ...(q.firstUploadFrom && { $gte: q.firstUploadFrom }),
          ...(q.firstUploadBefore && { $lt: q.firstUploadBefore }),
        },
      }),
    };
    const grouped: Document[] = [
      { $match: match },
      { $sort: { LastUploadTime: -1, _id: -1 } },
      {
        $group: {
          _id: '$UploadFileID',
          first: { $min: '$UploadTime' },
          last: { $max: '$LastUploadTime' },
          displayName: { $first: '$LastUploadFileName' },
          displayType: { $first: '$LastUploadContentType' },
          uploads: { $sum: '$UploadCount' },
          mine: { $sum: { $cond: [{ $eq: ['$UserID', q.accountId] }, '$UploadCount', 0] } },
          ...(q.uploaderId !== undefined && { byUploader: { $max: { $eq: ['$UserID', q.uploaderId] } } }),
          ...(q.kind && { ofKind: { $max: kindExpression(q.kind, '$LastUploadContentType', '$LastUploadFileName') } }),
        },
      },
      ...(Object.keys(picked).length > 0 ? [{ $match: picked }] : []),
      // Files the view uploaded under a name containing the text: looked up per file grouped.
      ...(q.nameContains
        ? this.having('named', this.c.names, { ...namesScopeMatch(scope), Name: containsPattern(q.nameContains) })
        : []),
    ];
    const entry = { $lookup: { from: 'fileInfo.files', localField: '_id', foreignField: '_id', as: 'entry' } };
    const direction = order === 'asc' ? 1 : -1;
    const [countRow] = await this.c.ledger
      .aggregate<{ total: number }>([...grouped, { $group: { _id: null, total: { $sum: 1 } } }])
      .toArray();
    const total = countRow?.total ?? 0;
    // A unit with no files (a new one), or a page past the end: nothing to group a second time.
    if (total <= q.offset) return { rows: [], total };
    const rows = await this.c.ledger
      .aggregate<{
        _id: ObjectId;
        first: Date;
        last: Date;
        displayName: string;
        displayType: string;
        uploads: number;
        mine: number;
        entry: CatalogDoc[];
      }>([
        ...grouped,
        // Sizes are the catalog's: looked up for every file when sorting by them, else for the page only.
        ...(sort === 'size' ? [entry] : []),
        { $sort: { [SCOPE_SORT_FIELDS[sort]]: direction, _id: 1 } },
        { $skip: q.offset },
        { $limit: q.limit },
        ...(sort === 'size' ? [] : [entry]),
      ])
      .toArray();
    return {
      rows: rows
        .filter((r) => r.entry.length > 0)
        .map((r) => ({
          entry: r.entry[0]!,
          displayName: r.displayName,
          displayType: r.displayType,
          uploadCount: r.uploads,
          myUploadCount: r.mine,
          firstUploadTime: r.first,
          lastUploadTime: r.last,
        })),
      total,
    };
  }

  /**
   * The whole archive, from the catalog (every content held, under its first name); the ledger
   * is summed per file shown, or per file selected when sorting by those sums.
   */
  private async listAll(q: UnitFilesQuery, sort: FileSort, order: 'asc' | 'desc', only?: ObjectId[]) {
    // Not a content being deleted.
    const and: Array<Filter<CatalogDoc>> = [
      { deletingAt: { $exists: false } },
      ...(only ? [{ _id: { $in: only } }] : []),
    ];
    if (q.kind) and.push(kindFilter(q.kind));
    if (q.firstUploadFrom || q.firstUploadBefore)
      and.push({
        uploadDate: {
          ...(q.firstUploadFrom && { $gte: q.firstUploadFrom }),
          ...(q.firstUploadBefore && { $lt: q.firstUploadBefore }),
        },
      });
    const filter: Filter<CatalogDoc> = and.length > 0 ? { $and: and } : {};
    const direction = order === 'asc' ? 1 : -1;
    const summed = sort === 'lastUpload' || sort === 'unitCount' || sort === 'myCount';
    const sums = summed ? this.sumsStages(q.accountId) : [];
    const ordered = [{ $sort: { [ALL_SORT_FIELDS[sort]]: direction, _id: 1 } }];
    let total: number;
    let docs: Array<CatalogDoc & { sums?: LedgerSums }>;
    if (q.nameContains) {
      // The uploader's filter after a name search: a lookup per file found only.
      const byUploader =
        q.uploaderId !== undefined
          ? [...this.having('byUploader', this.c.ledger, { UserID: q.uploaderId }), { $project: { byUploader: 0 } }]
          : [];
      ({ total, docs } = await this.searchAll(q, containsPattern(q.nameContains), filter, [...byUploader, ...sums], {
        sort,
        direction,
      }));
    } else if (q.uploaderId !== undefined) {
      // The uploader's files start from their ledger entries (index `uploader_unit_file`, led by
      // UserID), grouped per file into a stream (never one list), each looked up in the catalog by
      // `_id`: the work grows with the uploader's entries, not with the archive.
      const uploaded: Document[] = [
        { $match: { UserID: q.uploaderId, ...(only && { UploadFileID: { $in: only } }) } },
        { $group: { _id: '$UploadFileID' } },
        { $lookup: { from: this.c.catalog.collectionName, localField: '_id', foreignField: '_id', as: 'entry' } },
        { $unwind: '$entry' },
        { $replaceRoot: { newRoot: '$entry' } },
        { $match: filter },
      ];
      total =
        (
          await this.c.ledger.aggregate<{ n: number }>([...uploaded, { $count: 'n' }], { allowDiskUse: true }).toArray()
        )[0]?.n ?? 0;
      docs =
        total > q.offset
          ? await this.c.ledger
              .aggregate<CatalogDoc & { sums?: LedgerSums }>(
                [...uploaded, ...sums, ...ordered, { $skip: q.offset }, { $limit: q.limit }],
                { allowDiskUse: true },
              )
              .toArray()
          : [];
    } else {
      total = await this.c.catalog.countDocuments(filter);
      docs = summed
        ? await this.c.catalog
            .aggregate<CatalogDoc & { sums?: LedgerSums }>(
              [{ $match: filter }, ...sums, ...ordered, { $skip: q.offset }, { $limit: q.limit }],
              { allowDiskUse: true },
            )
            .toArray()
        : await this.c.catalog
            .find(filter)
            .sort({ [ALL_SORT_FIELDS[sort]]: direction, _id: 1 })
            .skip(q.offset)
            .limit(q.limit)
            .toArray();
    }
    const ledgerSums = summed ? undefined : await this.ledgerSums(docs, q.accountId);
    const rows = docs.map(({ sums: own, ...doc }) => {
      const s = own ?? ledgerSums?.get(doc._id.toHexString());
      return {
        entry: doc,
        displayName: doc.fileName,
        displayType: doc.contentType,
        uploadCount: s?.uploads ?? 0,
        myUploadCount: s?.mine ?? 0,
        firstUploadTime: doc.uploadDate,
        lastUploadTime: s?.last ?? doc.uploadDate,
      };
    });
    return { rows, total };
  }

  /**
   * The whole archive searched by name: the contents some unit uploaded under a name containing
   * the text, or whose first name (the catalog's) contains it. Each part starts from its matches,
   * never from every catalog entry: the names (`userInfo.names`, index `name`) grouped per file,
   * then those files' catalog entries by `_id`; and the catalog entries whose own name matches
   * (index `listing_name`) but no uploaded name does. The two are disjoint: their counts add up,
   * and the page is the two sorted parts merged (docs/decisions/mongo-name-search.md).
   */
  private async searchAll(
    q: UnitFilesQuery,
    pattern: RegExp,
    filter: Filter<CatalogDoc>,
    after: Document[],
    order: { sort: FileSort; direction: 1 | -1 },
  ): Promise<{ total: number; docs: Array<CatalogDoc & { sums?: LedgerSums }> }> {
    const named: Document[] = [
      { $match: { Name: pattern } },
      { $group: { _id: '$UploadFileID' } },
      { $lookup: { from: this.c.catalog.collectionName, localField: '_id', foreignField: '_id', as: 'entry' } },
      { $unwind: '$entry' },
      { $replaceRoot: { newRoot: '$entry' } },
      { $match: filter },
      ...after,
    ];
    const firstNamed: Document[] = [
      { $match: { $and: [filter, { fileName: pattern }] } },
      { $lookup: this.lookupOne('named', this.c.names, { Name: pattern }) },
      { $match: { named: { $size: 0 } } },
      { $project: { named: 0 } },
      ...after,
    ];
    const count = (rows: Array<{ n: number }>) => rows[0]?.n ?? 0;
    const [inNames, inCatalog] = await Promise.all([
      this.c.names
        .aggregate<{ n: number }>([...named, { $count: 'n' }], { allowDiskUse: true })
        .toArray()
        .then(count),
      this.c.catalog
        .aggregate<{ n: number }>([...firstNamed, { $count: 'n' }], { allowDiskUse: true })
        .toArray()
        .then(count),
    ]);
    const field = ALL_SORT_FIELDS[order.sort];
    // Each part's first offset + limit in the page's order, through a cursor; merged, the page is what follows the offset.
    const page = (pipeline: Document[]) => [
      ...pipeline,
      { $sort: { [field]: order.direction, _id: 1 } },
      { $limit: q.offset + q.limit },
    ];
    const parts = await Promise.all([
      inNames > 0
        ? this.c.names.aggregate<CatalogDoc & { sums?: LedgerSums }>(page(named), { allowDiskUse: true }).toArray()
        : [],
      inCatalog > 0
        ? this.c.catalog
            .aggregate<CatalogDoc & { sums?: LedgerSums }>(page(firstNamed), { allowDiskUse: true })
            .toArray()
        : [],
    ]);
    const merged = parts
      .flat()
      .sort(
        (a, b) => order.direction * compareValues(valueAt(a, field), valueAt(b, field)) || compareIds(a._id, b._id),
      );
    return { total: inNames + inCatalog, docs: merged.slice(q.offset, q.offset + q.limit) };
  }

  /** Per catalog entry, its ledger entries' last upload, uploads and those of the account, as `sums`. */
  private sumsStages(accountId: string): Document[] {
    return [
      { $lookup: { from: 'userInfo.users', localField: '_id', foreignField: 'UploadFileID', as: 'entries' } },
      {
        // One object, not dotted names: mongo-java-server takes 'sums.uploads' here as a field's name.
        $addFields: {
          sums: {
            last: { $ifNull: [{ $max: '$entries.LastUploadTime' }, '$uploadDate'] },
            uploads: { $sum: '$entries.UploadCount' },
            mine: {
              $sum: {
                $map: {
                  input: { $filter: { input: '$entries', cond: { $eq: ['$$this.UserID', accountId] } } },
                  in: '$$this.UploadCount',
                },
              },
            },
          },
        },
      },
      { $project: { entries: 0 } },
    ];
  }

  /**
   * One folder: its sub-folders and files from the names the view's units uploaded files under
   * (`userInfo.names`), in a unit's view through the index `unit_name` (UnitID, Name): the anchored
   * pattern of the folder's path reads only the names under it, in name order.
   */
  async folder(q: FolderQuery): Promise<FolderPage> {
    const scope = viewScopeOf(q);
    const range = folderRange(q.folder);
    const match: Filter<NameDoc> = {
      ...namesScopeMatch(scope),
      ...(range.low !== null && { Name: new RegExp(`^${escapeRegex(range.prefix)}`) }),
    };
    // Each (name, file) once (a reach's units may share one), with what follows the folder's path.
    const under: Document[] = [
      { $match: match },
      ...('unitId' in (scope ?? {}) ? [] : [{ $group: { _id: { n: '$Name', f: '$UploadFileID' } } }]),
      ...('unitId' in (scope ?? {})
        ? [{ $project: { _id: 0, name: '$Name', file: '$UploadFileID' } }]
        : [{ $project: { _id: 0, name: '$_id.n', file: '$_id.f' } }]),
      { $addFields: { rest: { $substrCP: ['$name', range.start - 1, { $strLenCP: '$name' }] } } },
      { $addFields: { slash: { $indexOfCP: ['$rest', '/'] } } },
    ];
    const subFolders: Document[] = [
      ...under,
      { $match: { slash: { $gt: 0 } } },
      { $group: { _id: { $substrCP: ['$rest', 0, '$slash'] }, files: { $sum: 1 } } },
    ];
    const [folderCount] = await this.c.names
      .aggregate<{ n: number }>([...subFolders, { $group: { _id: null, n: { $sum: 1 } } }])
      .toArray();
    const [fileCount] = await this.c.names
      .aggregate<{ n: number }>([...under, { $match: { slash: -1 } }, { $group: { _id: null, n: { $sum: 1 } } }])
      .toArray();
    const folderTotal = folderCount?.n ?? 0;
    const folders =
      q.offset < folderTotal
        ? await this.c.names
            .aggregate<{ _id: string; files: number }>([
              ...subFolders,
              { $sort: { _id: 1 } },
              { $skip: q.offset },
              { $limit: q.limit },
            ])
            .toArray()
        : [];
    const fileLimit = q.limit - folders.length;
    const named =
      fileLimit > 0
        ? await this.c.names
            .aggregate<{ name: string; file: ObjectId; rest: string }>([
              ...under,
              { $match: { slash: -1 } },
              { $sort: { name: 1, file: 1 } },
              { $skip: Math.max(0, q.offset - folderTotal) },
              { $limit: fileLimit },
            ])
            .toArray()
        : [];
    const ids = [...new Map(named.map((n) => [n.file.toHexString(), n.file])).values()];
    const listed = new Map<string, UnitFileListing>();
    if (ids.length > 0) {
      const page = await this.list({ ...q, sort: 'name', order: 'asc', limit: ids.length, offset: 0 }, ids);
      for (const item of page.items) listed.set(item.entry.fileId, item);
    }
    return {
      folders: folders.map((f) => ({ name: f._id, files: f.files })),
      files: named.flatMap((n) => {
        const listing = listed.get(n.file.toHexString());
        return listing ? [{ ...listing, path: n.rest }] : [];
      }),
      folderTotal,
      fileTotal: fileCount?.n ?? 0,
    };
  }

  /**
   * The upload actions that count now, of some files or of a folder's names: their events
   * (`audit.events`, through its index `upload_entry` by file), less those reversed
   * (`userInfo.uploads`) and those whose counting was interrupted (`pending`).
   */
  async uploads(q: ViewUploadsQuery): Promise<ViewUpload[]> {
    const scope = viewScopeOf(q);
    const range = q.folder !== undefined ? folderRange(q.folder) : undefined;
    const pattern = range && range.low !== null ? new RegExp(`^${escapeRegex(range.prefix)}`) : undefined;
    // A folder's files through a cursor (not `distinct`, whose answer is one document).
    const fileIds: AsyncIterable<string> | string[] = range
      ? this.folderFiles({ ...namesScopeMatch(scope), ...(pattern && { Name: pattern }) })
      : (q.fileIds ?? []);
    const inScope: Filter<AuditDoc> = !scope
      ? {}
      : 'unitId' in scope
        ? { 'unit.id': scope.unitId }
        : {
            'unit.city': scope.subtree.city,
            ...(scope.subtree.county !== undefined && { 'unit.county': scope.subtree.county }),
            ...(scope.subtree.town !== undefined && { 'unit.town': scope.subtree.town }),
          };
    const found: ViewUpload[] = [];
    for await (const some of inBatches(fileIds, 1000)) {
      const events = await this.c.audit
        .find({
          fileId: { $in: some },
          ...inScope,
          upload: { $exists: true },
          pending: { $exists: false },
          ...(pattern && { fileName: pattern }),
          ...(q.accountId !== undefined && { userId: q.accountId }),
          ...(q.since && { at: { $gte: q.since } }),
        })
        .toArray();
      const keys = events.map((e) => String(e._id));
      const reversed = new Set(
        (
          await this.c.uploadStates
            .find({ _id: { $in: keys }, State: 'reversed' }, { projection: { _id: 1 } })
            .toArray()
        ).map((d) => d._id),
      );
      for (const e of events)
        if (!reversed.has(String(e._id)))
          found.push({ key: String(e._id), fileId: e.fileId!, fileName: e.fileName!, accountId: e.userId!, at: e.at });
    }
    return found
      .sort((a, b) => a.at.getTime() - b.at.getTime() || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, q.limit);
  }

  /** The files with names matching `names` (each once), read through a cursor. */
  private async *folderFiles(names: Filter<NameDoc>): AsyncGenerator<string> {
    const files = this.c.names.aggregate<{ _id: ObjectId }>([{ $match: names }, { $group: { _id: '$UploadFileID' } }], {
      allowDiskUse: true,
    });
    try {
      for await (const f of files) yield f._id.toHexString();
    } finally {
      await files.close();
    }
  }

  /**
   * A $lookup into `as` of at most one document of `from` about the file of the document looked
   * from (its `_id`) that matches `filter`: through `from`'s index on UploadFileID.
   */
  private lookupOne(as: string, from: { collectionName: string }, filter: Document): Document {
    return {
      from: from.collectionName,
      let: { file: '$_id' },
      pipeline: [
        { $match: { $expr: { $eq: ['$UploadFileID', '$$file'] }, ...filter } },
        { $limit: 1 },
        { $project: { _id: 1 } },
      ],
      as,
    };
  }

  /** Only the files (`_id`) that have a document of `from` matching `filter`. */
  private having(as: string, from: { collectionName: string }, filter: Document): Document[] {
    return [{ $lookup: this.lookupOne(as, from, filter) }, { $match: { [as]: { $ne: [] } } }];
  }

  /** Per file: its last upload, its uploads, and those of the account. */
  private async ledgerSums(docs: CatalogDoc[], accountId: string): Promise<Map<string, LedgerSums>> {
    const sums = await this.c.ledger
      .aggregate<LedgerSums & { _id: ObjectId }>([
        { $match: { UploadFileID: { $in: docs.map((d) => d._id) } } },
        {
          $group: {
            _id: '$UploadFileID',
            last: { $max: '$LastUploadTime' },
            uploads: { $sum: '$UploadCount' },
            mine: { $sum: { $cond: [{ $eq: ['$UserID', accountId] }, '$UploadCount', 0] } },
          },
        },
      ])
      .toArray();
    return new Map(sums.map((s) => [s._id.toHexString(), s]));
  }

  /** The view's names of each file, first used first, at most FILE_NAMES_SHOWN each. */
  private async namesOf(ids: ObjectId[], scope: ViewScope | undefined) {
    const docs = await this.c.names
      .find({ UploadFileID: { $in: ids }, ...namesScopeMatch(scope) }, { projection: { UploadFileID: 1, Name: 1 } })
      .sort({ FirstUsed: 1, Name: 1 })
      .toArray();
    const seen = new Map<string, Set<string>>();
    for (const d of docs) {
      const id = d.UploadFileID.toHexString();
      seen.set(id, (seen.get(id) ?? new Set()).add(d.Name));
    }
    return new Map(
      [...seen].map(([id, names]) => [id, { names: [...names].slice(0, FILE_NAMES_SHOWN), nameCount: names.size }]),
    );
  }

  /** The view's uploaders of each file, by login, first uploader first, at most FILE_UPLOADERS_SHOWN each. */
  private async uploadersOf(ids: ObjectId[], scope: ViewScope | undefined) {
    const docs = await this.c.ledger
      .find(
        { UploadFileID: { $in: ids }, ...viewScopeMatch(scope) },
        { projection: { UploadFileID: 1, UserID: 1, UserName: 1 } },
      )
      .sort({ UploadTime: 1, UserID: 1 })
      .toArray();
    const seen = new Map<string, Map<string, string>>();
    for (const d of docs) {
      const id = d.UploadFileID.toHexString();
      const users = seen.get(id) ?? new Map<string, string>();
      if (!users.has(d.UserID)) users.set(d.UserID, d.UserName);
      seen.set(id, users);
    }
    return new Map(
      [...seen].map(([id, users]) => [
        id,
        { uploaders: [...users.values()].slice(0, FILE_UPLOADERS_SHOWN), uploaderCount: users.size },
      ]),
    );
  }
}

interface LedgerSums {
  last: Date;
  uploads: number;
  mine: number;
}

/** The grouped fields a unit's (subtree's) view sorts by. */
const SCOPE_SORT_FIELDS: Record<FileSort, string> = {
  name: 'displayName',
  size: 'entry.fileLength',
  firstUpload: 'first',
  lastUpload: 'last',
  unitCount: 'uploads',
  myCount: 'mine',
};

/** The catalog fields (and ledger sums) the whole archive's view sorts by. */
const ALL_SORT_FIELDS: Record<FileSort, string> = {
  name: 'fileName',
  size: 'fileLength',
  firstUpload: 'uploadDate',
  lastUpload: 'sums.last',
  unitCount: 'sums.uploads',
  myCount: 'sums.mine',
};

/** Catalog documents of a kind, by their (first upload's) media type and name. */
function kindFilter(kind: FileKind): Filter<CatalogDoc> {
  const rule = (r: FileKindRule): Array<Filter<CatalogDoc>> => [
    ...(r.types.length > 0 ? [{ contentType: { $in: [...r.types] } }] : []),
    ...r.typePrefixes.map((prefix) => ({ contentType: new RegExp(`^${escapeRegex(prefix)}`) })),
    {
      contentType: { $in: [...GENERIC_TYPES] },
      fileName: new RegExp(`\\.(${r.extensions.map(escapeRegex).join('|')})$`, 'i'),
    },
  ];
  if (kind !== 'other') return { $or: rule(FILE_KIND_RULES[kind]) };
  return { $nor: Object.values(FILE_KIND_RULES).flatMap(rule) };
}

/**
 * Whether a ledger entry (its media type and name, as expressions) is of a kind, as an
 * aggregation expression: extensions are compared as suffixes (no $regexMatch, which not every
 * server the archive runs on has).
 */
function kindExpression(kind: FileKind, type: string, name: string): Document {
  const suffix = (length: number) => ({
    $toLower: { $substrCP: [name, { $max: [0, { $subtract: [{ $strLenCP: name }, length] }] }, length] },
  });
  const rule = (r: FileKindRule): Document[] => {
    const byLength = new Map<number, string[]>();
    for (const e of r.extensions) byLength.set(e.length + 1, [...(byLength.get(e.length + 1) ?? []), `.${e}`]);
    return [
      { $in: [type, [...r.types]] },
      ...r.typePrefixes.map((prefix) => ({ $eq: [{ $substrCP: [type, 0, prefix.length] }, prefix] })),
      {
        $and: [
          { $in: [type, [...GENERIC_TYPES]] },
          { $or: [...byLength].map(([length, endings]) => ({ $in: [suffix(length), endings] })) },
        ],
      },
    ];
  };
  if (kind !== 'other') return { $or: rule(FILE_KIND_RULES[kind]) };
  return { $not: [{ $or: Object.values(FILE_KIND_RULES).flatMap(rule) }] };
}

/** The value at a dotted path of a document (`sums.last`). */
function valueAt(doc: Document, field: string): unknown {
  return field.split('.').reduce<unknown>((v, key) => (v as Document | undefined)?.[key], doc);
}

/** Two sort values as MongoDB orders them: strings by their UTF-8 bytes, dates and numbers by value. */
function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'string' && typeof b === 'string') return Buffer.compare(Buffer.from(a), Buffer.from(b));
  const [x, y] = [a instanceof Date ? a.getTime() : Number(a), b instanceof Date ? b.getTime() : Number(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

function compareIds(a: ObjectId, b: ObjectId): number {
  return Buffer.compare(a.id, b.id);
}

/** `items` (an array or a cursor) in arrays of at most `size`. */
async function* inBatches<T>(items: AsyncIterable<T> | Iterable<T>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const item of items) {
    batch.push(item);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
