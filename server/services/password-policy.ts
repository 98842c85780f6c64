import { createRequire } from 'node:module';
import { MIN_PASSWORD_LENGTH } from '../../shared/schemas.js';
import { WeakPasswordError } from '../errors.js';
import { usernameKey } from '../store/accounts/port.js';

/**
 * The password policy, wherever a password is set (an account created, a password changed or
 * reset): long enough, not the username, not one short pattern repeated, not a common password.
 * The common passwords are zxcvbn-ts's list (49,000 of them, from leaked-password corpora),
 * compared without case.
 */
let common: Set<string> | undefined;

/**
 * The list, read when a password is first set: zxcvbn-ts's dictionaries take 6 MB of the
 * server's memory, which a server that sets no password (most hours) should not hold.
 */
function commonPasswords(): Set<string> {
  const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as {
    dictionary: Record<string, string[]>;
  };
  return new Set(dictionary['passwords-common']!.map(usernameKey));
}

export function checkPasswordPolicy(password: string, username: string): void {
  if (Array.from(password).length < MIN_PASSWORD_LENGTH) {
    throw new WeakPasswordError('password_too_short', `A password has at least ${MIN_PASSWORD_LENGTH} characters.`);
  }
  // Compared as usernames are: compatibility forms folded, case ignored.
  const folded = usernameKey(password);
  const name = usernameKey(username);
  if (name.length > 0 && folded.includes(name)) {
    throw new WeakPasswordError('password_is_username', 'A password must not contain the username.');
  }
  if (repeatsShortPattern(folded)) {
    throw new WeakPasswordError(
      'password_repetitive',
      'A password must not be one character or a short pattern repeated (such as "aaaaaaaaaa" or "abcabcabcabc").',
    );
  }
  common ??= commonPasswords();
  if (common.has(folded)) {
    throw new WeakPasswordError(
      'password_too_common',
      'This password is among the most common ones, which are tried first: choose another.',
    );
  }
}

/**
 * One unit shorter than the minimum length, said at least twice (the last time perhaps cut short:
 * "12121212121"): the password is no stronger than the unit, which alone would be refused as too
 * short. A longer unit said twice ("correct horse correct horse") is a password in its own right.
 */
export function repeatsShortPattern(password: string): boolean {
  const chars = Array.from(password);
  const longest = Math.min(MIN_PASSWORD_LENGTH - 1, Math.floor(chars.length / 2));
  for (let period = 1; period <= longest; period++) {
    if (chars.every((c, i) => i < period || c === chars[i - period])) return true;
  }
  return false;
}
