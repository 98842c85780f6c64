import type { ContentStore, GarbageReport } from '../store/port.js';

/**
 * Garbage collection of bytes the archive does not own: staging areas idle longer than the
 * time to live (their upload died with a crash) and bytes no record owns at all.
 */
export class GarbageCollector {
  constructor(
    private readonly content: Pick<ContentStore, 'collectGarbage'>,
    private readonly stagingTtlMs: number,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  run(): Promise<GarbageReport> {
    return this.content.collectGarbage(new Date(this.clock().getTime() - this.stagingTtlMs));
  }
}
