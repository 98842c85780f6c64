import type { ContentStore, GarbageReport } from '../store/port.js';
import type { ResumableUploadService } from './resumable-uploads.js';

/**
 * Garbage collection of bytes the archive does not own: resumable uploads idle past their
 * expiry, staging areas idle longer than the time to live (their request died with a crash)
 * and bytes no record owns at all. Committed files and live uploads are never touched.
 */
export class GarbageCollector {
  constructor(
    private readonly content: Pick<ContentStore, 'collectGarbage'>,
    private readonly uploads: Pick<ResumableUploadService, 'expire'>,
    private readonly stagingTtlMs: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async run(): Promise<GarbageReport & { expiredUploads: number }> {
    const expiredUploads = await this.uploads.expire();
    const report = await this.content.collectGarbage(new Date(this.clock().getTime() - this.stagingTtlMs));
    return { expiredUploads, ...report };
  }
}
