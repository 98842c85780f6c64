import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { WeakPasswordError } from '../../server/errors.js';
import { checkPasswordPolicy } from '../../server/services/password-policy.js';

const refusal = (password: string, username = 'zhangsan') => {
  try {
    checkPasswordPolicy(password, username);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof WeakPasswordError);
    return err.code;
  }
};

describe('the password policy', () => {
  // First in this file: nothing before it has checked a password in this process.
  it('reads the list of common passwords only when a password is first checked (6 MB a server need not hold)', () => {
    const loaded = () =>
      Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('@zxcvbn-ts/language-common'));
    assert.equal(loaded(), false);
    assert.equal(refusal('qwertyuiop'), 'password_too_common');
    assert.equal(loaded(), true);
  });

  it('takes a long password that is neither the username nor a common one', () => {
    assert.equal(refusal('correct horse battery'), undefined);
    assert.equal(refusal('档案室的钥匙在左边抽屉'), undefined, 'ten characters of any script');
  });

  it('counts characters, not bytes or UTF-16 units', () => {
    assert.equal(refusal('档案室钥匙在抽屉'), 'password_too_short', 'eight characters, 24 bytes');
    assert.equal(refusal('😀😀😀😀😀'), 'password_too_short', 'five characters, ten UTF-16 units');
  });

  it('refuses a password holding the username, whatever its case or width', () => {
    assert.equal(refusal('zhangsan2026!'), 'password_is_username');
    assert.equal(refusal('My name is ZhangSan'), 'password_is_username');
    assert.equal(refusal('ｚｈａｎｇｓａｎ 的新密码'), 'password_is_username', 'full-width letters (NFKC)');
  });

  it('refuses one character, or a unit shorter than the minimum, repeated (the password is no stronger than the unit)', () => {
    for (const repeated of [
      'aaaaaaaaaa',
      '我我我我我我我我我我',
      'abcabcabcabc',
      'AbcABCabcAbC',
      '12121212121',
      'qwertyqwerty',
      'xyz1xyz1xyz1x',
      '😀🙂😀🙂😀🙂😀🙂😀🙂',
    ]) {
      assert.equal(refusal(repeated), 'password_repetitive', repeated);
    }
    assert.match(
      (() => {
        try {
          checkPasswordPolicy('aaaaaaaaaa', 'zhangsan');
        } catch (err) {
          return (err as Error).message;
        }
      })() ?? '',
      /must not be one character or a short pattern repeated/,
    );
  });

  it('takes a repetition whose unit is itself long enough, and a password that only starts or ends with a repeat', () => {
    assert.equal(refusal('correct horse correct horse'), undefined, 'a unit of 14 characters, said twice');
    assert.equal(refusal('aaaaaaaaab'), undefined, 'one character breaks the pattern');
    assert.equal(refusal('abababababX'), undefined);
    assert.equal(refusal('abcdefghia'), undefined, 'a repeat of one character at the ends is no pattern');
  });

  it('refuses the common passwords of the maintained list, whatever their case', () => {
    for (const common of ['1234567890', 'qwertyuiop', 'password123', 'PASSWORD123', '1q2w3e4r5t']) {
      assert.equal(refusal(common), 'password_too_common', common);
    }
  });
});
