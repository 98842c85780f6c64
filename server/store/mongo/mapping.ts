import type { ReportUnit } from '../../../shared/reports.js';
import type { Unit } from '../../../shared/schemas.js';
import type { Account, CatalogEntry, LedgerEntry, UploadRecord } from '../port.js';
import type { AccountDoc, CatalogDoc, LedgerDoc } from './collections.js';
import { ObjectId } from 'mongodb';

export const toNumber = (v: { toNumber(): number } | number): number => (typeof v === 'number' ? v : v.toNumber());

export function catalogEntryFromDoc(doc: CatalogDoc): CatalogEntry {
  return {
    fileId: doc._id.toHexString(),
    fileMD5: doc.fileMD5,
    fileSHA256: doc.fileSHA256,
    fileLength: toNumber(doc.fileLength),
    chunkSize: doc.chunkSize,
    chunkCount: doc.chunkCount,
    fileName: doc.fileName,
    contentType: doc.contentType,
    uploadDate: doc.uploadDate,
    md5Collision: doc.md5Collision,
  };
}

/** The ledger fields that describe who uploaded, from the authenticated account. */
export function ledgerIdentity(account: UploadRecord['account']) {
  const u = account.unit;
  return {
    UserName: account.username,
    'UploadGeography.GeoType': u.geoType,
    'UploadGeography.UploadGeoName': u[u.geoType] ?? u.city,
    UploadGeoAddress: { CityName: u.city, CountyName: u.county ?? null, TownName: u.town ?? null, StreetName: u.street ?? null },
    ...(u.coordinates ? { GeoPts: { Type: 'Point' as const, GeoCoordinates: u.coordinates } } : {}),
  };
}

export function unitFromLedgerDoc(doc: Pick<LedgerDoc, 'UploadGeography' | 'UploadGeoAddress' | 'GeoPts'>): Unit {
  const a = doc.UploadGeoAddress;
  return {
    id: doc.UploadGeography.UploadGeoNameID,
    geoType: doc.UploadGeography.GeoType,
    city: a.CityName,
    ...(a.CountyName ? { county: a.CountyName } : {}),
    ...(a.TownName ? { town: a.TownName } : {}),
    ...(a.StreetName ? { street: a.StreetName } : {}),
    ...(doc.GeoPts ? { coordinates: doc.GeoPts.GeoCoordinates } : {}),
  };
}

/** A unit as reports show it: absent levels omitted, no coordinates. */
export function reportUnitFromDoc(doc: Pick<LedgerDoc, 'UploadGeography' | 'UploadGeoAddress'>): ReportUnit {
  const { coordinates: _, ...unit } = unitFromLedgerDoc(doc);
  return unit;
}

export function ledgerEntryFromDoc(doc: LedgerDoc): LedgerEntry {
  return {
    userId: doc.UserID,
    userName: doc.UserName,
    unit: unitFromLedgerDoc(doc),
    fileId: doc.UploadFileID.toHexString(),
    uploadTime: doc.UploadTime,
    lastUploadTime: doc.LastUploadTime,
    uploadFileName: doc.UploadFileName,
    lastUploadFileName: doc.LastUploadFileName,
    lastContentType: doc.LastUploadContentType,
    uploadCount: doc.UploadCount,
  };
}

/** Records whose `id` is the document's `_id`, and nothing else changes. */
export function recordFromDoc<T extends { _id: string }>(doc: T): Omit<T, '_id'> & { id: string } {
  const { _id, ...rest } = doc;
  return { id: _id, ...rest };
}

export function accountFromDoc(doc: AccountDoc): Account {
  // Accounts written before the login throttle may still carry failedLogins and lockedUntil.
  const { _id, username, passwordHash, role, unit, createdAt, mustChangePassword } = doc;
  return { id: _id, username, passwordHash, role, unit, createdAt, mustChangePassword };
}

/** Parses a file id; undefined for anything that is not a 24-hex ObjectId. */
export function objectIdOf(fileId: string): ObjectId | undefined {
  return /^[0-9a-f]{24}$/.test(fileId) ? new ObjectId(fileId) : undefined;
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * "Contains `text`", as SQL `LIKE '%text%'` on the embedded store: case-insensitive for ASCII
 * letters only (the `i` option would also fold other scripts, which SQLite does not).
 */
export function containsPattern(text: string): RegExp {
  return new RegExp(escapeRegex(text).replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`));
}
