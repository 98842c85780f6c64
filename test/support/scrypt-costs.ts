import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { after, before } from 'node:test';

/**
 * The cost N of every scrypt run while the enclosing suite runs, in order: node:crypto's export is
 * replaced (and synced to ESM imports) before the suite's tests and put back after them. The
 * caller empties the list between tests as it needs.
 */
export function recordScryptCosts(): number[] {
  const costs: number[] = [];
  const real = crypto.scrypt;
  before(() => {
    crypto.scrypt = ((...args: Parameters<typeof real>) => {
      const options = args[3];
      costs.push(options.N ?? options.cost ?? 0);
      return (real as (...a: unknown[]) => void)(...args);
    }) as typeof real;
    syncBuiltinESMExports();
  });
  after(() => {
    crypto.scrypt = real;
    syncBuiltinESMExports();
  });
  return costs;
}
