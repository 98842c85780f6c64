/**
 * Content identity: MD5 alone never merges two files. (`{md5, sha256, size}` on the wire; the
 * MongoDB catalog documents keep the seed design's fileMD5, fileSHA256 and fileLength.)
 */
export interface ContentKey {
  md5: string;
  sha256: string;
  length: number;
}

/** One entry per distinct content (`fileInfo.files`), known by its identity. */
export interface CatalogEntry extends ContentKey {
  fileId: string;
  chunkSize: number;
  chunkCount: number;
  /** The name the content was first uploaded under. */
  fileName: string;
  contentType: string;
  uploadDate: Date;
  /** Another entry shares this MD5 with a different SHA-256. */
  md5Collision: boolean;
}

export interface NewCatalogEntry {
  key: ContentKey;
  fileName: string;
  contentType: string;
  uploadDate: Date;
}

/** An entry whose content is being deleted (`Catalog.beginDeletion`), and since when. */
export interface DeletingEntry extends CatalogEntry {
  deletingSince: Date;
  /**
   * Whether the deletion was cleared of holds (冻结) after the mark (`clearDeletion`), so the bytes
   * may go; one not cleared may yet be cancelled (`cancelDeletion`: a holder, or a hold, found).
   */
  deletionCleared: boolean;
}

/**
 * The catalog offers only live entries: `get`, `findByKey`, `scan` and `count` leave out an entry
 * being deleted (docs/decisions/purge.md), so a download, a check or a proof treats it as absent.
 */
export interface Catalog {
  get(fileId: string): Promise<CatalogEntry | undefined>;
  findByKey(key: ContentKey): Promise<CatalogEntry | undefined>;
  /** Every entry in file id order, a page at a time: the entries after `afterFileId`. */
  scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]>;
  count(): Promise<number>;
  /**
   * Marks an entry as being deleted, by one conditional write, and takes it out of the content's
   * identity at once: `get` and `findByKey` no longer find it, and a commit of the same content
   * stores it anew under a new file id. Answers the entry (its identity as it was) when it is being
   * deleted now, by this call or an earlier one; undefined when the catalog has no such entry.
   */
  beginDeletion(fileId: string, at: Date): Promise<DeletingEntry | undefined>;
  /**
   * Marks an entry being deleted as cleared of holds and holders, by one conditional write: from
   * then on `cancelDeletion` does not take it. True when it is being deleted and cleared now (by
   * this call or before); false when it is live (cancelled) or gone.
   */
  clearDeletion(fileId: string): Promise<boolean>;
  /**
   * Makes an entry being deleted, and not cleared, live again (an upload counted it meanwhile, or
   * a hold came); true if this call did. A cleared deletion is never cancelled: its bytes may be going. Its identity comes back unless a commit stored the same content anew meanwhile: then it
   * stays live under its file id, found by `get` but not by `findByKey` (the newer entry is).
   */
  cancelDeletion(fileId: string): Promise<boolean>;
  /** Entries being deleted since before `before`, the oldest first (the sweep finishes them). */
  deletions(before: Date, limit: number): Promise<DeletingEntry[]>;
  /** Removes an entry being deleted (a live one never); harmless when it is gone already. */
  remove(fileId: string): Promise<void>;
}
