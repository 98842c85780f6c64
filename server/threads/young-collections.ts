/** V8's collector: present where the process runs with --expose-gc (`npm run serve`, the Dockerfile), not in tests or tools. */
type Collect = (options: { type: 'minor' }) => void;

/** Bytes received between two collections of the young generation. */
export const RECEIVED_BYTES_PER_COLLECTION = 8 * 1024 * 1024;

/**
 * Collects V8's young generation after every RECEIVED_BYTES_PER_COLLECTION bytes an upload
 * receives. Each socket read is a fresh buffer of up to 64 KiB outside V8's heap; once its bytes
 * are copied into a chunk it is garbage, but it is freed only when the small object holding it is
 * collected. An upload makes few such objects per buffer, so the young generation (1 MB, the
 * server's --max-semi-space-size) fills slowly, and V8 collected for the buffers' own sake only
 * after about 64 MB of them (its limit of memory outside the heap): a 1 GiB upload's server held
 * 30–60 MB of dead buffers at its peak (RSS 145–168 MB). A minor collection of a young generation
 * that small takes well under a millisecond.
 */
export class YoungCollections {
  private received = 0;

  constructor(
    private readonly collect: Collect | undefined,
    private readonly every = RECEIVED_BYTES_PER_COLLECTION,
  ) {}

  /** Counts bytes received (and copied out of the buffer they came in); collects when enough have. */
  receivedBytes(bytes: number): void {
    if (!this.collect) return;
    this.received += bytes;
    if (this.received < this.every) return;
    this.received = 0;
    this.collect({ type: 'minor' });
  }
}

/** The process's, shared by every upload (the garbage is the process's, whichever upload made it). */
export const youngCollections = new YoungCollections((globalThis as { gc?: Collect }).gc);
