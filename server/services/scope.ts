import type { InstantUploadScope } from '../../shared/schemas.js';
import type { Account } from '../store/accounts/port.js';
import type { CatalogEntry } from '../store/catalog/port.js';
import type { Ledger } from '../store/ledger/port.js';

/**
 * Whether a caller may be told that the archive already holds some content. Telling a clerk
 * "duplicate" reveals that somebody uploaded that document (the side channel of client-side
 * dedup), so with a narrower scope only uploads from the caller's own county or unit count;
 * outside it, the content is still stored once, but the caller is answered as for new content.
 */
export class DuplicateScope {
  constructor(
    private readonly scope: InstantUploadScope,
    private readonly ledger: Pick<Ledger, 'hasUploadInScope'>,
  ) {}

  async reveals(entry: CatalogEntry, caller: Account): Promise<boolean> {
    const unit = caller.unit;
    switch (this.scope) {
      case 'archive':
        return true;
      case 'county':
        return this.ledger.hasUploadInScope(entry.fileId, { city: unit.city, county: unit.county ?? null });
      case 'unit':
        return this.ledger.hasUploadInScope(entry.fileId, { unitId: unit.id });
    }
  }
}
