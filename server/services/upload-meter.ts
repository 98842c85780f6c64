/** How an upload was counted, for whoever watches the archive's activity (the metrics). */
export interface CountedUpload {
  via: 'direct' | 'tus' | 'batch' | 'instant';
  /** The real outcome, also where the clerk was told "stored" (outside the instant-upload scope). */
  outcome: 'stored' | 'duplicate';
  /** The file's length: bytes stored for new content, bytes saved for a duplicate. */
  bytes: number;
}

export interface UploadMeter {
  counted(upload: CountedUpload): void;
}
