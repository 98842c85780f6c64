import { Router, type Request, type Response } from 'express';
import type { z } from 'zod';
import {
  collisionsQuery,
  crossUnitQuery,
  nearDuplicatesQuery,
  pairReopenRequest,
  pairReviewRequest,
  repeatUploadersQuery,
  savingsQuery,
  similarityOf,
} from '../../../shared/reports.js';
import type {
  CollisionRow,
  CrossUnitRow,
  NearDuplicateFile,
  NearDuplicateRow,
  RepeatEntryRow,
  RepeatUnitRow,
  RepeatUploaderRow,
  RepeatUserRow,
  ReportName,
  ReportPage,
  ReportUnit,
  SavingsRow,
} from '../../../shared/reports.js';
import { personLabel } from '../../../shared/accounts.js';
import type { AuditService } from '../../services/audit.js';
import type { NearDuplicateService } from '../../services/near-duplicates/detection.js';
import type { PairReviews } from '../../services/near-duplicates/reviews.js';
import type { ReportService } from '../../services/reports.js';
import type { UnitDirectory } from '../../services/unit-directory.js';
import { requireAuth } from '../auth.js';
import {
  EXPORT_BATCH_ROWS,
  readableColumns,
  streamCsv,
  type Cell,
  type ExportLanguage,
  type RowBatches,
} from '../export.js';
import { parse } from '../validate.js';
import { recordViewing } from '../viewing.js';

const UNIT_HEADER = ['unit id', 'city', 'county', 'town', 'street'];
const unitCells = (u: ReportUnit): Cell[] => [u.id, u.city, u.county, u.town, u.street];
const unitLabel = (u: Pick<ReportUnit, 'city' | 'county' | 'town' | 'street'>) =>
  [u.city, u.county, u.town, u.street].filter(Boolean).join('/');

/** A table's CSV: header and one row per table row (the same columns as the JSON, flattened). */
interface CsvTable<Row> {
  header: string[];
  row: (r: Row) => Cell[];
}

const repeatCsv = (group: 'entry' | 'user' | 'unit'): CsvTable<RepeatUploaderRow> => {
  // Next to the repeats: how many were copies inside one upload, how many re-sends.
  const totalsHeader = [
    'files',
    'uploads',
    'repeat uploads',
    'copies within one upload',
    're-sends',
    'repeat bytes',
    'first upload',
    'last upload',
  ];
  const totals = (r: RepeatUserRow | RepeatUnitRow): Cell[] => [
    r.files,
    r.uploads,
    r.repeatUploads,
    r.copies,
    r.resends,
    r.repeatBytes,
    r.firstUploadTime,
    r.lastUploadTime,
  ];
  if (group === 'entry') {
    return {
      header: [
        'user',
        'name',
        'user id',
        ...UNIT_HEADER,
        'file id',
        'file name',
        'size (bytes)',
        'uploads',
        'copies within one upload',
        're-sends',
        'first upload',
        'last upload',
      ],
      row: (row) => {
        const r = row as RepeatEntryRow;
        return [
          r.userName,
          r.userDisplayName,
          r.userId,
          ...unitCells(r.unit),
          r.fileId,
          r.fileName,
          r.fileLength,
          r.uploadCount,
          r.copies,
          r.resends,
          r.firstUploadTime,
          r.lastUploadTime,
        ];
      },
    };
  }
  if (group === 'user') {
    return {
      header: ['user', 'name', 'user id', ...UNIT_HEADER, ...totalsHeader],
      row: (row) => {
        const r = row as RepeatUserRow;
        return [r.userName, r.userDisplayName, r.userId, ...unitCells(r.unit), ...totals(r)];
      },
    };
  }
  return {
    header: [...UNIT_HEADER, 'users', ...totalsHeader],
    row: (row) => {
      const r = row as RepeatUnitRow;
      return [...unitCells(r.unit), r.users, ...totals(r)];
    },
  };
};

const crossUnitCsv = (language: ExportLanguage): CsvTable<CrossUnitRow> => ({
  header: [
    'file id',
    'file name',
    'size (bytes)',
    'units',
    'users',
    'uploads',
    'first upload',
    'last upload',
    'uploaders',
  ],
  row: (r) => [
    r.fileId,
    r.fileName,
    r.fileLength,
    r.units,
    r.users,
    r.uploads,
    r.firstUploadTime,
    r.lastUploadTime,
    // One cell: "unit (user, user: uploads)" per unit, earliest first; a user as "name (login)" where named.
    r.uploaders
      .map((u) => {
        const users = u.userNames.map((login, i) => personLabel(login, u.userDisplayNames[i], language));
        return `${unitLabel(u.unit)} (${users.join(', ')}: ${u.uploads})`;
      })
      .join('; '),
  ],
});

const savingsCsv = (group: 'unit' | 'day' | 'week' | 'month'): CsvTable<SavingsRow> => ({
  header: [...(group === 'unit' ? ['city', 'county', 'town'] : [group]), 'uploads', 'saved uploads', 'saved bytes'],
  row: (r) => [...('period' in r ? [r.period] : [r.city, r.county, r.town]), r.uploads, r.savedUploads, r.savedBytes],
});

const collisionsCsv: CsvTable<CollisionRow> = {
  header: ['md5', 'file id', 'sha256', 'size (bytes)', 'file name', 'first stored', 'uploads', 'files with this md5'],
  row: (r) => [r.md5, r.fileId, r.sha256, r.fileLength, r.fileName, r.uploadDate, r.uploads, r.filesWithMd5],
};

const nearDuplicateFileHeader = (side: string) => [
  `${side} file id`,
  `${side} file name`,
  `${side} size (bytes)`,
  `${side} first stored`,
  `${side} uploading units`,
  `${side} differs in`,
];
const nearDuplicateFileCells = (f: NearDuplicateFile): Cell[] => [
  f.fileId,
  f.fileName,
  f.fileLength,
  f.uploadDate,
  f.units.map(unitLabel).join('; '),
  f.snippet,
];
const nearDuplicatesCsv: CsvTable<NearDuplicateRow> = {
  header: [
    'found',
    'similarity',
    'method',
    'hamming distance',
    'jaccard',
    'containment',
    ...nearDuplicateFileHeader('A:'),
    ...nearDuplicateFileHeader('B:'),
    // Two scans compared page by page: each one's pages, how many match, and which (empty otherwise).
    'A: pages',
    'B: pages',
    'matching pages',
    'page pairs',
    'handled at',
    'handled by',
    'note',
  ],
  row: (r) => [
    r.foundAt,
    similarityOf(r),
    r.method,
    r.hamming,
    r.jaccard,
    r.containment,
    ...nearDuplicateFileCells(r.a),
    ...nearDuplicateFileCells(r.b),
    r.pages?.a,
    r.pages?.b,
    r.pages?.matches.length,
    r.pages?.matches.map((m) => `${m.a}-${m.b} (${Math.round(m.similarity * 100)}%)`).join('; '),
    r.review?.at,
    r.review?.userName,
    r.review?.note,
  ],
};

/**
 * `/api/reports/*`: administrators only. JSON (a page, `total` over all pages, also as
 * X-Total-Count) or, with `format=csv`, every row as CSV. Every view and export is audited.
 */
export function reportRoutes(
  reports: ReportService,
  audit: AuditService,
  nearDuplicates: Pick<NearDuplicateService, 'report' | 'reportRows'>,
  directory: Pick<UnitDirectory, 'narrowToReach'>,
  timeZone: string,
  reviews: PairReviews,
): Router {
  const router = Router();
  router.use(requireAuth(['admin']));

  // A near-duplicate pair marked handled (已处理) with a note, or open again.
  router.put('/near-duplicates/review', async (req, res) => {
    const { note, ...pair } = parse(pairReviewRequest, req.body, 'body');
    res.json(await reviews.review(req.principal!.account, pair, note, req.ip ?? null));
  });
  router.delete('/near-duplicates/review', async (req, res) => {
    await reviews.reopen(req.principal!.account, parse(pairReopenRequest, { ...req.query }, 'query'), req.ip ?? null);
    res.status(204).end();
  });

  // How many collisions the caller's reach holds, for the banner on top of every table: a number
  // only, not a view of the report, so not recorded (each view of a table would otherwise write two events).
  router.get('/collisions/count', async (req, res) => {
    const { format: _format, lang: _lang, ...all } = parse(collisionsQuery, { limit: '1' }, 'query');
    const query = await directory.narrowToReach(req.principal!.account, all);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ total: (await reports.collisions(query)).total });
  });

  function table<S extends z.ZodType<{ format: 'json' | 'csv'; lang?: ExportLanguage }>, Row>(
    name: ReportName | 'near-duplicates',
    schema: S,
    run: (q: Omit<z.output<S>, 'format' | 'lang'>) => Promise<ReportPage<Row>>,
    csv: (q: z.output<S>) => CsvTable<Row>,
    // Every row for an export, a batch at a time (one statement or cursor, no pages).
    rows: (q: Omit<z.output<S>, 'format' | 'lang'>) => RowBatches<Row>,
  ) {
    router.get(`/${name}`, async (req: Request, res: Response) => {
      const query = parse(schema, { ...req.query }, 'query');
      const { format, lang, ...rest } = query;
      // An administrator of a subtree sees its own reach, whatever the filter asks.
      const asked = await directory.narrowToReach(req.principal!.account, rest);
      if (format === 'csv') {
        await recordViewing(audit, req, { view: 'report_viewed', export: 'report_exported' }, name);
        const { header, row } = csv(query);
        const readable = lang && readableColumns(lang, timeZone, header);
        await streamCsv(res, name, readable ? readable.header : header, rows(asked), (r) =>
          readable ? readable.cells(row(r)) : row(r),
        );
        return;
      }
      const page = await run(asked);
      await recordViewing(audit, req, { view: 'report_viewed', export: 'report_exported' }, name);
      res.setHeader('X-Total-Count', String(page.total));
      res.json(page);
    });
  }

  table(
    'repeat-uploaders',
    repeatUploadersQuery,
    (q) => reports.repeatUploaders(q),
    (q) => repeatCsv(q.group),
    (q) => reports.repeatUploaderRows(q, EXPORT_BATCH_ROWS),
  );
  table(
    'cross-unit',
    crossUnitQuery,
    (q) => reports.crossUnit(q),
    (q) => crossUnitCsv(q.lang ?? 'en'),
    (q) => reports.crossUnitRows(q, EXPORT_BATCH_ROWS),
  );
  table(
    'savings',
    savingsQuery,
    (q) => reports.savings(q),
    (q) => savingsCsv(q.group),
    (q) => reports.savingsRows(q, EXPORT_BATCH_ROWS),
  );
  table(
    'collisions',
    collisionsQuery,
    (q) => reports.collisions(q),
    () => collisionsCsv,
    (q) => reports.collisionRows(q, EXPORT_BATCH_ROWS),
  );
  table(
    'near-duplicates',
    nearDuplicatesQuery,
    (q) => nearDuplicates.report(q),
    () => nearDuplicatesCsv,
    (q) => nearDuplicates.reportRows(q, EXPORT_BATCH_ROWS),
  );
  return router;
}
