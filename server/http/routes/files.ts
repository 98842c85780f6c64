import type { Readable } from 'node:stream';
import type { AuditService } from '../../services/audit.js';
import { pipeline } from 'node:stream/promises';
import contentDisposition from 'content-disposition';
import { Router, type Request } from 'express';
import multer from 'multer';
import { z } from 'zod';
import { cleanContentType, cleanFileName, cleanUploadPath } from '../../../shared/file-name.js';
import { drawable, previewOf } from '../../../shared/file-types.js';
import {
  fileIdSchema,
  fileListQuery,
  fileReadQuery,
  filePageParams,
  filePageQuery,
  fileTextSearchQuery,
  folderListQuery,
  uploadFields,
  withdrawableQuery,
} from '../../../shared/schemas.js';
import { BadRequestError, PayloadTooLargeError, RangeNotSatisfiableError, ValidationError } from '../../errors.js';
import type { FileService, VisibleFile } from '../../services/files.js';
import type { PageImages } from '../../services/page-images.js';
import type { IngestService } from '../../services/ingest.js';
import type { TextSearchService } from '../../services/text-search.js';
import type { WithdrawalService } from '../../services/withdrawals.js';
import type { ByteRange } from '../../store/content/port.js';
import { requireAuth } from '../auth.js';
import { actionKey, clientKey } from '../idempotency-key.js';
import { StagingStorageEngine, type StagedFile } from '../upload-engine.js';
import { parse } from '../validate.js';

export interface FileRouteDeps {
  ingest: IngestService;
  audit: AuditService;
  files: FileService;
  textSearch: TextSearchService;
  /** What 撤回 from 本单位文件 would take back (GET /api/files/withdrawable). */
  withdrawals: Pick<WithdrawalService, 'withdrawable'>;
  /** The pages of PDFs and images drawn for the viewer (GET /api/files/:id/pages/:page). */
  pageImages: Pick<PageImages, 'draw'>;
  maxFileSize: number;
}

/** Room for the multipart envelope around a file of the maximum size. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** `/api/files`: upload (multipart), list, download. */
export function fileRoutes(deps: FileRouteDeps): Router {
  const router = Router();
  const upload = multer({
    storage: new StagingStorageEngine(deps.ingest),
    // Browsers and scripts send raw UTF-8 file names; latin1 (the default) garbles Chinese.
    defParamCharset: 'utf8',
    limits: { fileSize: deps.maxFileSize, files: 1, fields: 4, fieldSize: 256, parts: 5, headerPairs: 50 },
  }).single('file');

  router.post(
    '/',
    requireAuth(),
    (req, _res, next) => {
      // Refuse a declared oversize body before reading any of it.
      const declared = Number(req.get('content-length'));
      if (Number.isFinite(declared) && declared > deps.maxFileSize + MULTIPART_OVERHEAD)
        throw new PayloadTooLargeError(deps.maxFileSize);
      if (!req.is('multipart/form-data'))
        throw new ValidationError('Send the file as multipart/form-data, in the form field "file".');
      clientKey(req);
      next();
    },
    upload,
    async (req, res) => {
      const file = req.file as StagedFile | undefined;
      if (!file) throw new ValidationError('No file was attached: send it in the form field "file".');
      let fields;
      try {
        fields = parse(uploadFields, { ...req.body }, 'form');
      } catch (err) {
        await deps.ingest.discard(file.staged);
        throw err;
      }
      let result;
      try {
        result = await deps.ingest.commit(
          file.staged,
          {
            uploader: req.principal!.account,
            fileName: cleanFileName(file.originalname),
            path: cleanUploadPath(file.originalname),
            contentType: cleanContentType(file.mimetype),
            declaredMd5: fields.md5,
          },
          { via: 'direct', address: req.ip ?? null, key: actionKey(req, 'direct') },
        );
      } catch (err) {
        // Not resumable: bytes a failed commit left staged are of no use (harmless if committed).
        await deps.ingest.discard(file.staged).catch(() => {});
        throw err;
      }
      res.status(result.status === 'stored' ? 201 : 200).json(result);
    },
  );

  router.get('/', requireAuth(), async (req, res) => {
    const query = parse(fileListQuery, { ...req.query }, 'query');
    res.json(await deps.files.list(req.principal!, query));
  });

  // Search by content: the caller's files whose text holds the words (a file outside its view is never counted or shown).
  router.get('/search', requireAuth(), async (req, res) => {
    const query = parse(fileTextSearchQuery, { ...req.query }, 'query');
    res.json(await deps.textSearch.search(req.principal!, query));
  });

  router.get('/folders', requireAuth(), async (req, res) => {
    const query = parse(folderListQuery, { ...req.query }, 'query');
    res.json(await deps.files.folder(req.principal!, query));
  });

  router.get('/withdrawable', requireAuth(['clerk', 'admin']), async (req, res) => {
    const query = parse(withdrawableQuery, { ...req.query }, 'query');
    res.json(await deps.withdrawals.withdrawable(req.principal!.account, query));
  });

  router.get('/uploaders', requireAuth(), async (req, res) => {
    parse(z.strictObject({}), { ...req.query }, 'query');
    res.json(await deps.files.uploaders(req.principal!));
  });

  // A page of a PDF or an image drawn as a JPEG by the server: what the viewer shows in every
  // browser (Chromium 86 and 109 cannot run today's pdf.js; none shows a TIFF).
  router.get('/:id/pages/:page', requireAuth(), async (req, res) => {
    const fileId = parse(fileIdSchema, req.params.id, 'file id');
    const { page } = parse(filePageParams, { page: req.params.page }, 'page');
    const { width } = parse(filePageQuery, { ...req.query }, 'query');
    const file = await deps.files.open(req.principal!, fileId);
    // Asked after the file is found, as the inline preview: a caller who may not see it learns nothing more.
    if (!drawable(file.contentType, file.fileName))
      throw new ValidationError(
        'Only the pages of PDF files and images (JPEG, PNG, TIFF, GIF, WebP, AVIF) can be shown in the browser; download this file instead.',
        { field: 'id' },
      );
    // The same content is drawn the same way: a page seen before is not drawn again.
    res.set({ ETag: `"${file.entry.md5}-${page}-${width}"`, 'Cache-Control': 'private, no-cache' });
    if (req.fresh) return void res.status(304).end();
    const drawn = await deps.pageImages.draw(
      {
        // The same id and content, the same bytes: the drawing thread keeps them open for the next page.
        key: `${file.entry.fileId}:${file.entry.sha256}`,
        name: file.fileName,
        length: file.entry.length,
        read: () => deps.files.read(file),
      },
      page,
      width,
    );
    if (req.method === 'GET') {
      await deps.audit.record('download', req.principal!.account, {
        address: req.ip ?? null,
        fileId: file.entry.fileId,
        fileName: file.fileName,
        note: { code: 'download', length: file.entry.length, preview: true, page },
      });
    }
    res.set({
      'Content-Type': 'image/jpeg',
      'Content-Length': String(drawn.jpeg.byteLength),
      'X-Page-Count': String(drawn.pages),
      'Content-Disposition': contentDisposition(`${file.fileName.split('/').pop()}-${page}.jpg`, { type: 'inline' }),
      'Content-Security-Policy': "default-src 'none'; sandbox",
    });
    res.end(
      req.method === 'GET' ? Buffer.from(drawn.jpeg.buffer, drawn.jpeg.byteOffset, drawn.jpeg.byteLength) : undefined,
    );
  });

  // Express answers HEAD with this GET handler; the body is skipped below.
  router.get('/:id', requireAuth(), async (req, res) => {
    const fileId = parse(fileIdSchema, req.params.id, 'file id');
    const { disposition } = parse(fileReadQuery, { ...req.query }, 'query');
    const file = await deps.files.open(req.principal!, fileId);
    const { entry } = file;
    // Shown in the browser only as what it can be nothing but (an image, a PDF): never HTML, SVG
    // or anything else that could run as part of the page; asked after the file is found, so a
    // caller who may not see it learns nothing more.
    const preview = disposition === 'inline' ? previewOf(file.contentType, file.fileName) : undefined;
    if (disposition === 'inline' && !preview)
      throw new ValidationError(
        'Invalid disposition: only PDF files and images (JPEG, PNG, GIF, WebP, BMP, AVIF) can be shown in the browser; download this file instead.',
        { field: 'disposition' },
      );
    res.set({
      'Accept-Ranges': 'bytes',
      ETag: `"${entry.md5}"`,
      'Last-Modified': file.since.toUTCString(),
      'Cache-Control': 'private, no-cache',
    });
    if (req.fresh) return void res.status(304).end();

    const range = requestedRange(req, file);
    // Before the document's own headers: if the event cannot be stored, the error is not saved as the document.
    if (req.method === 'GET') {
      await deps.audit.record('download', req.principal!.account, {
        address: req.ip ?? null,
        fileId: entry.fileId,
        fileName: file.fileName,
        note: {
          code: 'download',
          length: entry.length,
          ...(range ? { range: { start: range.start, end: range.end } } : {}),
          ...(preview ? { preview: true } : {}),
        },
      });
    }
    // The first bytes are read before the answer begins: a file found damaged there (a missing
    // content file, a range in lost bytes) gets a clear error instead of a cut-off download.
    const body = req.method === 'GET' ? await started(deps.files.read(file, range)) : undefined;
    res.set({
      'Content-Disposition': contentDisposition(file.fileName, { type: preview ? 'inline' : 'attachment' }),
      // Stored documents are never run as part of this site, even if they are HTML; a preview
      // too is a sandboxed document that may load nothing.
      'Content-Security-Policy': "default-src 'none'; sandbox",
    });
    // setHeader, not res.type(): Express would append a charset we do not know.
    res.setHeader('Content-Type', preview?.type ?? file.contentType);
    if (range) {
      res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end - 1}/${entry.length}`);
      res.setHeader('Content-Length', String(range.end - range.start));
    } else {
      res.setHeader('Content-Length', String(entry.length));
    }
    if (!body) return void res.end();
    // Damage found further on cuts the connection (error handler): never a short file as if whole.
    await pipeline(body, res);
  });

  return router;
}

/** A single byte range from `Range`, honoured only if `If-Range` (when sent) still matches. */
function requestedRange(req: Request, { entry, since }: VisibleFile): ByteRange | undefined {
  if (req.headers.range === undefined) return undefined;
  const ifRange = req.get('if-range');
  if (ifRange !== undefined && ifRange !== `"${entry.md5}"` && ifRange !== since.toUTCString()) return undefined;
  const ranges = req.range(entry.length);
  if (ranges === -1)
    throw new RangeNotSatisfiableError(
      entry.length,
      `The requested range lies outside the file, which has ${entry.length} bytes.`,
    );
  if (ranges === -2 || ranges === undefined || ranges.type !== 'bytes') {
    throw new BadRequestError('The Range header is malformed; ask for one byte range such as "bytes=0-1023".');
  }
  if (ranges.length !== 1)
    throw new RangeNotSatisfiableError(entry.length, 'Only a single byte range per request is supported.');
  return { start: ranges[0]!.start, end: ranges[0]!.end + 1 };
}

/** Resolves once a stream has its first bytes (or ended), rejects if it fails before. */
async function started(stream: Readable): Promise<Readable> {
  // Kept: an error between here and the pipeline taking over must not go unhandled.
  stream.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    const settle = (err?: Error) => {
      stream.off('readable', ok).off('error', settle);
      if (err) {
        stream.destroy();
        reject(err);
      } else resolve();
    };
    const ok = () => settle();
    stream.once('readable', ok).once('error', settle);
  });
  return stream;
}
