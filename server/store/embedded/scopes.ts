import type { ViewScope } from '../ledger/port.js';

/**
 * The rows of `alias` in a view's scope (a unit, or a unit subtree), as SQL and its named
 * parameters (prefixed with `scope_`). `alias` is a table or view with the columns unit_id, city,
 * county and town: the ledger, ledger_names, the unit-files listing's sources.
 */
export function scopeWhere(
  alias: string,
  scope: ViewScope | undefined,
): { sql: string; params: Record<string, string> } {
  if (!scope) return { sql: 'true', params: {} };
  if ('unitId' in scope) return { sql: `${alias}.unit_id = @scope_unit`, params: { scope_unit: scope.unitId } };
  const levels = (['city', 'county', 'town'] as const).filter((level) => scope.subtree[level] !== undefined);
  return {
    sql: levels.map((level) => `${alias}.${level} = @scope_${level}`).join(' AND '),
    params: Object.fromEntries(levels.map((level) => [`scope_${level}`, scope.subtree[level]!])),
  };
}
