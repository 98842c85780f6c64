/**
 * The fixity check: every stored file re-read and its MD5 and SHA-256 recomputed. Shared by the
 * server (which runs it and keeps the last result) and the admin page (which shows it).
 */
export interface VerificationProblem {
  fileId: string;
  fileName: string;
  fileLength: number;
  /** missing: bytes absent (a chunk or the whole file); corrupted: present but not the file's bytes. */
  kind: 'missing' | 'corrupted';
  /**
   * The first chunk found missing or not matching its checksum; null when only the whole file's
   * digests differ (a file stored before chunk checksums, or bytes and checksum changed together).
   */
  chunk: number | null;
  detail: string;
}

export interface VerificationResult {
  /**
   * running: in progress; interrupted: its process stopped before the end (the counts are as
   * far as it got); passed / failed: finished, without or with problems.
   */
  state: 'running' | 'interrupted' | 'passed' | 'failed';
  trigger: 'schedule' | 'command';
  host: string;
  startedAt: string;
  finishedAt: string | null;
  /** Catalogued files when the check began, and how many of them were checked so far. */
  totalFiles: number;
  files: number;
  bytes: number;
  missing: number;
  corrupted: number;
  /** Files stored before chunk checksums that got theirs, their bytes proved right by this check. */
  checksummed: number;
  /** The first problems found (at most VERIFICATION_PROBLEMS_KEPT); the counts above are complete. */
  problems: VerificationProblem[];
}

export const VERIFICATION_PROBLEMS_KEPT = 200;
