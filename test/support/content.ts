import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Unit } from '../../shared/schemas.js';
import type { Account } from '../../server/store/accounts/port.js';
import type { ArchiveStore } from '../../server/store/archive-store.js';
import type { ContentKey } from '../../server/store/catalog/port.js';
import type { CommitOutcome } from '../../server/store/content/port.js';
import type { NearFingerprint } from '../../server/store/near-duplicates/port.js';
import type { UploadAction, UploadRecord } from '../../server/store/ledger/port.js';

export const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
export const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');
export const keyOf = (data: Uint8Array): ContentKey => ({
  md5: md5(data),
  sha256: sha256(data),
  length: data.byteLength,
});
export const randomContent = (length: number): Buffer => randomBytes(length);

/** Two different 128-byte messages with one MD5 (Wang et al., 2004): a real collision. */
export const MD5_COLLISION = [
  'd131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f8955ad340609f4b30283e488832571415a085125e8f7cdc99fd91dbdf280373c5bd8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70',
  'd131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f8955ad340609f4b30283e4888325f1415a085125e8f7cdc99fd91dbd7280373c5bd8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70',
].map((hex) => Buffer.from(hex, 'hex'));

/** A long text's fingerprint as the near-duplicate index keeps it, with the lookup keys given. */
export const nearFingerprint = (
  fileId: string,
  keys: number[],
  overrides: Partial<NearFingerprint> = {},
): NearFingerprint => ({
  fileId,
  format: 'txt',
  skipped: null,
  units: 800,
  short: false,
  simhash: '0123456789abcdef',
  keys,
  pages: [],
  at: new Date(Date.UTC(2026, 10, 1)),
  ...overrides,
});

/** The body of `POST /api/uploads/check` for these bytes. */
export const checkBody = (data: Uint8Array, name = 'doc.pdf') => {
  const key = keyOf(data);
  return { md5: key.md5, sha256: key.sha256, size: key.length, name, type: 'application/pdf' };
};

/** What a client holding the bytes answers: the MD5 of each requested range. */
export const digestsFor = (data: Uint8Array, ranges: Array<{ start: number; end: number }>) =>
  ranges.map((r) => md5(data.subarray(r.start, r.end)));

/** Writes bytes into a new staging area the way the ingest service does. */
export async function stageBytes(
  store: Pick<ArchiveStore, 'content'>,
  data: Uint8Array,
): Promise<{ stagingId: string; key: ContentKey }> {
  const { content } = store;
  const stagingId = await content.stage(new Date());
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < data.byteLength; at += content.chunkSize)
    chunks.push(data.subarray(at, at + content.chunkSize));
  await content.write(stagingId, 0, chunks);
  return { stagingId, key: keyOf(data) };
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(Buffer.from(part as Uint8Array));
  return Buffer.concat(parts);
}

export function unit(id: string, county = '青县'): Unit {
  return { id, geoType: 'town', city: '沧州市', county, town: `${id}镇` };
}

let accountSeq = 0;
export function testAccount(overrides: Partial<Account> = {}): Account {
  accountSeq++;
  return {
    id: `acc-${accountSeq}-${randomBytes(3).toString('hex')}`,
    username: `user${accountSeq}`,
    passwordHash: 'scrypt$x',
    role: 'clerk',
    unit: unit('unit-a'),
    createdAt: new Date(),
    mustChangePassword: false,
    disabled: false,
    lastLoginAt: null,
    displayName: null,
    ...overrides,
  };
}

/** Reads a response body to its end or its failure: the bytes that arrived, and the failure if any. */
export async function readUntilFailure(
  body: AsyncIterable<Uint8Array>,
): Promise<{ received: Buffer; failure: unknown }> {
  const parts: Buffer[] = [];
  try {
    for await (const part of body) parts.push(Buffer.from(part));
    return { received: Buffer.concat(parts), failure: undefined };
  } catch (failure) {
    return { received: Buffer.concat(parts), failure: failure ?? new Error('failed') };
  }
}

/** The record of an upload that carried the bytes of a 10-byte PDF (a tus, multipart or batch upload's). */
export function carryingUpload(account: Account, fileId: string, at = new Date('2026-03-02T08:00:00Z')): UploadRecord {
  return {
    account,
    fileId,
    fileName: 'a.pdf',
    contentType: 'application/pdf',
    at,
    day: at.toISOString().slice(0, 10),
    fileLength: 10,
    carriedBytes: true,
  };
}

/** An upload action as the services make it: the record, its audit event, under `key` (a new one by default). */
export function uploadAction(
  record: UploadRecord,
  key: string = randomUUID(),
  statusUnlessStored: 'stored' | 'duplicate' = 'duplicate',
): UploadAction {
  const { account } = record;
  return {
    key,
    statusUnlessStored,
    record,
    event: (stored) => ({
      at: record.at,
      action: 'upload',
      userId: account.id,
      userName: account.username,
      unit: account.unit,
      address: null,
      fileId: record.fileId,
      fileName: record.fileName,
      detail: `test: ${stored ? 'stored' : 'duplicate'}`,
      note: null,
    }),
  };
}

/** Counts one upload under a new key: its UploadCount. */
export async function countUpload(
  store: Pick<ArchiveStore, 'ledger'>,
  record: UploadRecord,
): Promise<{ uploadCount: number }> {
  return { uploadCount: (await store.ledger.count(uploadAction(record))).uploadCount };
}

/** Stages and commits bytes as a PDF named `fileName`. */
export async function commitBytes(
  store: Pick<ArchiveStore, 'content'>,
  data: Uint8Array,
  fileName = 'doc.pdf',
  { contentType = 'application/pdf', uploadDate = new Date() }: { contentType?: string; uploadDate?: Date } = {},
): Promise<CommitOutcome> {
  const staged = await stageBytes(store, data);
  return store.content.commit(staged.stagingId, { key: staged.key, fileName, contentType, uploadDate });
}

/** The record of an upload that carried no bytes (a duplicate's). */
export function uploadRecord(
  account: Account,
  fileId: string,
  fileName = 'doc.pdf',
  at = new Date(),
  contentType = 'application/pdf',
): UploadRecord {
  return {
    account,
    fileId,
    fileName,
    contentType,
    at,
    day: at.toISOString().slice(0, 10),
    fileLength: 1,
    carriedBytes: false,
  };
}

/** Counts one upload of a file by an account (a duplicate's: it stored no bytes). */
export function recordUpload(
  store: Pick<ArchiveStore, 'ledger'>,
  account: Account,
  fileId: string,
  fileName = 'doc.pdf',
  at = new Date(),
  contentType = 'application/pdf',
) {
  return countUpload(store, uploadRecord(account, fileId, fileName, at, contentType));
}

/** Three names of one content uploaded by one clerk, a day apart: a ledger entry keeps the first and the last. */
const THREE_NAMES = ['旧/第一个名字.pdf', '旧/中间的名字.pdf', '旧/最后的名字.pdf'];

export async function uploadUnderThreeNames(store: Pick<ArchiveStore, 'ledger'>, account: Account, fileId: string) {
  for (const [i, name] of THREE_NAMES.entries())
    await recordUpload(store, account, fileId, name, new Date(Date.UTC(2025, 0, 1 + i)));
}

/** The names the account's unit lists for the file found by the first of the three names. */
export async function namesFoundByFirstName(
  store: Pick<ArchiveStore, 'unitFiles'>,
  account: Account,
): Promise<string[] | undefined> {
  const list = await store.unitFiles.list({
    unitId: account.unit.id,
    accountId: account.id,
    nameContains: '第一个',
    limit: 10,
    offset: 0,
  });
  return list.items[0]?.names;
}

/** A typed PDF of `pages` pages (A5), each headed with its number in blue: small, and drawn quickly. */
export async function typedPdf(pages: number, heading = 'Transfer list'): Promise<Buffer> {
  const { PDFDocument, rgb, StandardFonts } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++)
    doc
      .addPage([420, 595])
      .drawText(`${heading}, page ${n}`, { x: 40, y: 520, size: 20, font, color: rgb(0.1, 0.3, 0.6) });
  return Buffer.from(await doc.save());
}
