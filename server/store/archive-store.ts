import type { AccountStore, LoginAttemptStore, RateCounts, SessionStore, TokenStore } from './accounts/port.js';
import type { AuditLog } from './audit/port.js';
import type { Catalog } from './catalog/port.js';
import type { ClaimStore } from './claims/port.js';
import type { ContentStore } from './content/port.js';
import type { JobStore } from './jobs/port.js';
import type { Ledger } from './ledger/port.js';
import type { FileTexts } from './file-texts/port.js';
import type { FingerprintQueue, NearDuplicateIndex } from './near-duplicates/port.js';
import type { ReceiptStore } from './receipts/port.js';
import type { Reports } from './reports/port.js';
import type { UploadStore } from './uploads/port.js';
import type { UnitFiles } from './unit-files/port.js';
import type { UnitStore } from './units/port.js';
import type { WithdrawalStore } from './withdrawals/port.js';
import type { HoldStore } from './holds/port.js';
import type { DisposalStore } from './disposals/port.js';

/**
 * The whole store as the services see it: one port per capability (each in its own folder, with
 * its embedded and MongoDB adapters, schema and conformance suite), and nothing about which
 * database is behind them. Services ask for the narrow slices they use (`Pick<ArchiveStore, …>`).
 * server/store/embedded.ts and server/store/mongo.ts assemble one.
 */
export interface ArchiveStore {
  readonly kind: 'embedded' | 'mongodb';
  readonly audit: AuditLog;
  readonly content: ContentStore;
  readonly catalog: Catalog;
  readonly ledger: Ledger;
  /** 本单位文件: where the catalog's and the ledger's data meet, read only. */
  readonly unitFiles: UnitFiles;
  readonly reports: Reports;
  readonly units: UnitStore;
  readonly accounts: AccountStore;
  readonly sessions: SessionStore;
  readonly tokens: TokenStore;
  readonly claims: ClaimStore;
  readonly uploads: UploadStore;
  readonly receipts: ReceiptStore;
  /** 撤回 and 回收站: withdrawals of uploads and their restores (the counts are the ledger's). */
  readonly withdrawals: WithdrawalStore;
  /** 冻结: holds on files or units, which withdrawal, purge and disposal ask about. */
  readonly holds: HoldStore;
  /** 销毁清册: the disposal register, kept for ever (the counts are the ledger's, the bytes the content's). */
  readonly disposals: DisposalStore;
  readonly jobs: JobStore;
  readonly rateCounts: RateCounts;
  readonly loginAttempts: LoginAttemptStore;
  readonly nearDuplicates: NearDuplicateIndex;
  readonly fingerprintQueue: FingerprintQueue;
  /** Files' texts (extracted or recognised) and the full-text index over their terms. */
  readonly fileTexts: FileTexts;
  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
