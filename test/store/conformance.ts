import { accountConformance } from '../../server/store/accounts/conformance.js';
import { auditConformance } from '../../server/store/audit/conformance.js';
import { catalogConformance, catalogSeedingConformance } from '../../server/store/catalog/conformance.js';
import { claimConformance } from '../../server/store/claims/conformance.js';
import { contentConformance } from '../../server/store/content/conformance.js';
import { jobConformance } from '../../server/store/jobs/conformance.js';
import { ledgerConformance, ledgerSeedingConformance } from '../../server/store/ledger/conformance.js';
import { fileTextConformance } from '../../server/store/file-texts/conformance.js';
import { nearDuplicateConformance } from '../../server/store/near-duplicates/conformance.js';
import { receiptConformance } from '../../server/store/receipts/conformance.js';
import { reportsConformance } from '../../server/store/reports/conformance.js';
import { unitConformance } from '../../server/store/units/conformance.js';
import { unitFilesConformance } from '../../server/store/unit-files/conformance.js';
import { uploadConformance } from '../../server/store/uploads/conformance.js';
import { withdrawalConformance } from '../../server/store/withdrawals/conformance.js';
import { holdConformance } from '../../server/store/holds/conformance.js';
import { disposalConformance } from '../../server/store/disposals/conformance.js';
import type { StoreTarget } from '../support/stores.js';

/**
 * Every store capability's conformance suite (each in its capability's folder), against one
 * adapter: what the embedded store and MongoDB must both do.
 */
export function storeConformance(target: StoreTarget): void {
  for (const suite of [
    contentConformance,
    catalogConformance,
    catalogSeedingConformance,
    unitFilesConformance,
    ledgerConformance,
    ledgerSeedingConformance,
    uploadConformance,
    claimConformance,
    unitConformance,
    accountConformance,
    auditConformance,
    jobConformance,
    nearDuplicateConformance,
    fileTextConformance,
    reportsConformance,
    receiptConformance,
    withdrawalConformance,
    holdConformance,
    disposalConformance,
  ]) {
    suite(target);
  }
}
