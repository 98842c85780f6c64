import type { Request } from 'express';
import multer from 'multer';
import type { IngestService, StagedContent } from '../services/ingest.js';

/** What the engine adds to `req.file`. */
export interface StagedFile extends Express.Multer.File {
  staged: StagedContent;
}

/**
 * A multer storage engine that streams the file part straight into the archive's chunks,
 * hashing as it goes (one pass, no temporary file, memory flat in file size). It only stages:
 * the route commits once it has also seen the form's other fields.
 */
export class StagingStorageEngine implements multer.StorageEngine {
  constructor(private readonly ingest: IngestService) {}

  _handleFile(
    _req: Request,
    file: Express.Multer.File,
    callback: (error?: unknown, info?: Partial<StagedFile>) => void,
  ): void {
    this.ingest.stage(file.stream).then(
      (staged) => callback(null, { staged, size: staged.key.length }),
      (err: unknown) => callback(err),
    );
  }

  _removeFile(_req: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    const staged = (file as Partial<StagedFile>).staged;
    if (!staged) return callback(null);
    this.ingest.discard(staged).then(
      () => callback(null),
      (err: Error) => callback(err),
    );
  }
}
