import type { Filter } from 'mongodb';
import type { UnitSubtree, ViewScope } from '../ledger/port.js';
import type { LedgerDoc, NameDoc } from './ledger-documents.js';

/** Which ledger entries and names a view sees: a unit, a unit subtree, or (no scope) the whole archive. */

/** The ledger entries of a unit subtree, by their address names. */
export function subtreeMatch(subtree: UnitSubtree): Filter<LedgerDoc> {
  return {
    'UploadGeoAddress.CityName': subtree.city,
    ...(subtree.county !== undefined && { 'UploadGeoAddress.CountyName': subtree.county }),
    ...(subtree.town !== undefined && { 'UploadGeoAddress.TownName': subtree.town }),
  };
}

/** The ledger entries in a view's scope (every entry without one). */
export function viewScopeMatch(scope: ViewScope | undefined): Filter<LedgerDoc> {
  if (!scope) return {};
  return 'unitId' in scope ? { 'UploadGeography.UploadGeoNameID': scope.unitId } : subtreeMatch(scope.subtree);
}

/** The names in a view's scope (every name without one). */
export function namesScopeMatch(scope: ViewScope | undefined): Filter<NameDoc> {
  if (!scope) return {};
  if ('unitId' in scope) return { UnitID: scope.unitId };
  const { city, county, town } = scope.subtree;
  return {
    CityName: city,
    ...(county !== undefined && { CountyName: county }),
    ...(town !== undefined && { TownName: town }),
  };
}
