import type { Db } from '../../server/store/embedded/database.js';

/** A statement a store read rows with (`all` or `get`), with the values it ran with. */
export interface RanStatement {
  sql: string;
  args: unknown[];
}

/**
 * `db` as a store is given it, recording in `ran` each statement it reads rows with, as it runs:
 * a test then asks SQLite how it plans each (EXPLAIN QUERY PLAN), with the values it ran with.
 */
export function watchedStatements(db: Db, ran: RanStatement[]): Db {
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'prepare')
        return (sql: string) => {
          const statement = target.prepare(sql);
          return new Proxy(statement, {
            get(s, name) {
              const value = Reflect.get(s, name, s) as unknown;
              if (typeof value !== 'function') return value;
              return (...args: unknown[]) => {
                if (name === 'all' || name === 'get') ran.push({ sql, args });
                return (value as (...a: unknown[]) => unknown).apply(s, args);
              };
            },
          });
        };
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
