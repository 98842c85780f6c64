import type { Unit } from '../shared/schemas.js';
import { hashPassword } from '../server/services/password.js';
import type { AccountStore } from '../server/store/accounts/port.js';

/** A clerk a bench makes: its id, login and unit. */
export interface BenchClerk {
  id: string;
  username: string;
  unit: Unit;
}

/**
 * Clerks straight into the store, a thousand to a transaction (an import's way in: 100,000 one by
 * one take minutes), with one password hash for all (hashing is not what these benches measure);
 * then the administrators they log in as: `top` (`<prefix>-top`, the whole archive) and, given a
 * county's unit, `county` (`<prefix>-county`, the reach the pages narrow to).
 */
export async function seedBenchAccounts(
  accounts: AccountStore,
  clerks: readonly BenchClerk[],
  options: { password: string; prefix: string; county?: Unit },
): Promise<void> {
  const base = {
    passwordHash: await hashPassword(options.password),
    createdAt: new Date(),
    mustChangePassword: false,
    disabled: false,
    lastLoginAt: null,
    displayName: null,
  };
  const top = `${options.prefix}-top`;
  for (let from = 0; from < clerks.length; from += 1000) {
    await accounts.createMany(
      clerks
        .slice(from, from + 1000)
        .map((c) => ({ ...base, id: c.id, username: c.username, role: 'clerk' as const, unit: c.unit })),
      { id: `seed-${from}`, accountId: top, createdAt: base.createdAt, expiresAt: base.createdAt, accounts: [] },
    );
  }
  await accounts.create({
    ...base,
    id: top,
    username: 'top',
    role: 'admin',
    unit: { id: 'archive', geoType: 'city', city: 'Archive' },
  });
  if (options.county)
    await accounts.create({
      ...base,
      id: `${options.prefix}-county`,
      username: 'county',
      role: 'admin',
      unit: options.county,
    });
}
