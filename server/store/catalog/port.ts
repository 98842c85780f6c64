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

export interface Catalog {
  get(fileId: string): Promise<CatalogEntry | undefined>;
  findByKey(key: ContentKey): Promise<CatalogEntry | undefined>;
  /** Every entry in file id order, a page at a time: the entries after `afterFileId`. */
  scan(afterFileId: string | undefined, limit: number): Promise<CatalogEntry[]>;
  count(): Promise<number>;
}
