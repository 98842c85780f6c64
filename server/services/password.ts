import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

// OWASP's scrypt minimum (N=2^17, r=8, p=1) costs ~128 MiB per hash; 2^15 keeps a login
// under ~100 ms and 32 MiB here while staying far beyond brute-force reach for our password rules.
/** scrypt's N for the passwords people choose: the archive's, unless its services are composed with another (tests). */
export const PASSWORD_COST = 2 ** 15;
const PARAMS = { N: PASSWORD_COST, r: 8, p: 1 };
const KEY_LENGTH = 32;
/** For one-time passwords only: 2^8 (256 KiB, within a core's cache; well under a millisecond). */
const ONE_TIME_PARAMS = { N: 2 ** 8, r: 8, p: 1 };

function derive(password: string, salt: Buffer, p: typeof PARAMS): Promise<Buffer> {
  const options: ScryptOptions = { N: p.N, r: p.r, p: p.p, maxmem: 256 * p.N * p.r };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** `scrypt$N$r$p$salt$hash` (base64), so parameters can be raised later without a migration. */
async function hashWith(password: string, p: typeof PARAMS): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, p);
  return ['scrypt', p.N, p.r, p.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export function hashPassword(password: string, cost = PASSWORD_COST): Promise<string> {
  return hashWith(password, { ...PARAMS, N: cost });
}

/**
 * A one-time password's hash: machine-made (about 59 bits, oneTimePassword) and changed at the
 * first login, it needs no slow hash to be out of reach, so an import of 1,000 accounts hashes
 * in a second instead of two minutes (docs/decisions/one-time-password-hash.md).
 */
export function hashOneTimePassword(password: string): Promise<string> {
  return hashWith(password, ONE_TIME_PARAMS);
}

/** Checks a password against its stored hash; one cheaper than `cost` is padded to cost as much. */
export async function verifyPassword(password: string, stored: string, cost = PASSWORD_COST): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await derive(password, Buffer.from(salt, 'base64'), { N: Number(N), r: Number(r), p: Number(p) });
  // A cheaper hash (a one-time password's) takes as long to check as any other, so the time a
  // login takes does not tell that the account exists and has not logged in yet.
  if (Number(N) < cost) await derive(password, Buffer.alloc(16), { ...PARAMS, N: cost });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash that matches no password, verified against when a username is unknown so timing does not reveal it. */
export function unmatchableHash(cost = PASSWORD_COST): string {
  return `scrypt$${cost}$${PARAMS.r}$${PARAMS.p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;
}
