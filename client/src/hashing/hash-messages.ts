import type { ContentDigest } from './content-hash.js';

/** What the page asks of a hash worker (hash.worker.ts), and what it answers. */
export type HashRequest =
  | { type: 'hash'; jobId: number; file: Blob; sliceSize?: number }
  | { type: 'hashSmall'; jobId: number; files: Blob[] }
  | { type: 'proofs'; jobId: number; file: Blob; ranges: { start: number; end: number }[] };

export type HashReply =
  | { type: 'progress'; jobId: number; hashed: number; total: number }
  | { type: 'digest'; jobId: number; digest: ContentDigest }
  | { type: 'proofs'; jobId: number; digests: string[] }
  | { type: 'smallDigests'; jobId: number; digests: Array<ContentDigest | { error: string }> }
  | { type: 'error'; jobId: number; message: string };
