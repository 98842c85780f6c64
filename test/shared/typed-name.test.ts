import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DISPLAY_NAME_RULE, displayNameField, newTokenRequest, TOKEN_LABEL_RULE } from '../../shared/accounts.js';
import { typedName, typedNameField, type NameRule } from '../../shared/typed-name.js';
import { UNIT_NAME_RULE, unitName } from '../../shared/units.js';

/**
 * Every name a person types (display names, unit names, token labels) is normalised and checked
 * by one function: what shows as nothing or moves text about is refused, so two names that look
 * alike are the same name.
 */
const UNIT: NameRule = UNIT_NAME_RULE;

describe('typedName', () => {
  it('keeps ordinary names exactly', () => {
    for (const name of [
      '清州镇',
      '王芳',
      '档案室 (二楼)',
      'Müller-Lüdenscheidt',
      '50%',
      '第3档案室',
      '☎️ 前台',
      '葛\u{E0100}',
    ])
      assert.deepEqual(typedName(name, UNIT), { ok: true, name });
  });

  it('normalises: NFC, trimmed, each run of spaces one ordinary space', () => {
    const cases: Array<[string, string, string]> = [
      ['e\u0301', '\u00E9', 'a combining accent is the precomposed letter (NFC)'],
      ['  清州镇\t', '清州镇', 'spaces and a tab at either end are trimmed'],
      ['清州镇\n', '清州镇', 'a line break pasted at the end is trimmed'],
      ['\u3000清州镇\u3000', '清州镇', 'the ideographic space is trimmed too'],
      ['清州  镇', '清州 镇', 'two spaces are one'],
      ['清州\u3000镇', '清州 镇', 'the ideographic space is an ordinary space'],
      ['清州\u00A0镇', '清州 镇', 'a no-break space is an ordinary space'],
      ['清州\u2003\u2009镇', '清州 镇', 'the em and thin spaces are one ordinary space'],
    ];
    for (const [typed, name, why] of cases) assert.deepEqual(typedName(typed, UNIT), { ok: true, name }, why);
  });

  it('refuses what shows as nothing or moves text about, naming the character and where it is', () => {
    const cases: Array<[string, string, string]> = [
      ['清\u0000州', 'U+0000', 'NUL (Cc)'],
      ['清\u0007州', 'U+0007', 'a bell (Cc)'],
      ['清\n州', 'U+000A', 'a line break inside (Cc)'],
      ['清\u007F州', 'U+007F', 'DEL (Cc)'],
      ['清\u0085州', 'U+0085', 'next line (Cc)'],
      ['清\u200B州', 'U+200B', 'a zero-width space (Cf)'],
      ['清\u200D州', 'U+200D', 'a zero-width joiner (Cf)'],
      ['清\u202E州', 'U+202E', 'a right-to-left override (Cf)'],
      ['清\u2066州', 'U+2066', 'a left-to-right isolate (Cf)'],
      ['清\u00AD州', 'U+00AD', 'a soft hyphen (Cf)'],
      ['清\u180E州', 'U+180E', 'the Mongolian vowel separator (Cf)'],
      ['清\uFEFF州', 'U+FEFF', 'a byte-order mark inside (Cf)'],
      ['清\u{E0041}州', 'U+E0041', 'a tag character (Cf)'],
      ['清\u2028州', 'U+2028', 'the line separator (Zl)'],
      ['清\u2029州', 'U+2029', 'the paragraph separator (Zp)'],
      ['清\uE000州', 'U+E000', 'a private-use character (Co)'],
      ['清\u{F0000}州', 'U+F0000', 'a supplementary private-use character (Co)'],
      ['清\u0378州', 'U+0378', 'an unassigned code point (Cn)'],
      ['清\uFFFF州', 'U+FFFF', 'a noncharacter (Cn)'],
      ['清\uD800州', 'U+D800', 'a lone surrogate (Cs)'],
      ['清\u115F州', 'U+115F', 'the Hangul choseong filler'],
      ['清\u1160州', 'U+1160', 'the Hangul jungseong filler'],
      ['清\u3164州', 'U+3164', 'the Hangul filler'],
      ['清\uFFA0州', 'U+FFA0', 'the halfwidth Hangul filler'],
      ['清\u2800州', 'U+2800', 'the braille blank'],
      ['清\u034F州', 'U+034F', 'the combining grapheme joiner'],
    ];
    for (const [typed, character, why] of cases)
      assert.deepEqual(typedName(typed, UNIT), { ok: false, problem: 'hidden_character', character, at: 2 }, why);
    // A variation selector chooses the glyph of the character before it; alone it shows nothing.
    assert.deepEqual(typedName('\uFE0F清州', UNIT), {
      ok: false,
      problem: 'hidden_character',
      character: 'U+FE0F',
      at: 1,
    });
    assert.deepEqual(typedName('清 \uFE0F州', UNIT), {
      ok: false,
      problem: 'hidden_character',
      character: 'U+FE0F',
      at: 3,
    });
  });

  it('refuses a blank lookalike of an official name: 清州镇 followed by a Hangul filler', () => {
    assert.deepEqual(typedName('清州镇\u3164', UNIT), {
      ok: false,
      problem: 'hidden_character',
      character: 'U+3164',
      at: 4,
    });
  });

  it('refuses names that show nothing at all', () => {
    assert.deepEqual(typedName('\u3164\u3164', DISPLAY_NAME_RULE), {
      ok: false,
      problem: 'hidden_character',
      character: 'U+3164',
      at: 1,
    });
    assert.deepEqual(typedName('\u2800', DISPLAY_NAME_RULE), {
      ok: false,
      problem: 'hidden_character',
      character: 'U+2800',
      at: 1,
    });
    assert.deepEqual(typedName('\u0301\u0301', UNIT), { ok: false, problem: 'no_visible_character' });
    for (const blank of ['', '   ', '\u3000', '\t\n'])
      assert.deepEqual(typedName(blank, UNIT), { ok: false, problem: 'empty' }, JSON.stringify(blank));
  });

  it('takes an empty name as "none" where a name is optional', () => {
    assert.deepEqual(typedName('  ', DISPLAY_NAME_RULE), { ok: true, name: '' });
    assert.deepEqual(typedName('', TOKEN_LABEL_RULE), { ok: true, name: '' });
  });

  it('refuses "/" and every character drawn like it in a name that becomes part of a path', () => {
    const slashes = ['/', '\u2044', '\u2215', '\u2571', '\u27CB', '\u29F8', '\u2F03', '\u3033', '\u31D3', '\uFF0F'];
    for (const slash of [...slashes, '\u{1F67C}', '\u1735']) {
      const character = `U+${slash.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      assert.deepEqual(
        typedName(`沧州市${slash}青县`, UNIT),
        { ok: false, problem: 'path_separator', character, at: 4 },
        character,
      );
      // A person's name or a token's label is not part of a path.
      assert.equal(typedName(`甲${slash}乙`, DISPLAY_NAME_RULE).ok, true, character);
    }
  });

  it('counts the length in characters, after normalising', () => {
    assert.deepEqual(typedName('𠀀'.repeat(60), UNIT), { ok: true, name: '𠀀'.repeat(60) });
    assert.deepEqual(typedName('长'.repeat(61), UNIT), { ok: false, problem: 'too_long', max: 60 });
    assert.deepEqual(typedName(` ${'e\u0301'.repeat(60)} `, UNIT), { ok: true, name: '\u00E9'.repeat(60) });
    assert.deepEqual(typedName('长'.repeat(51), DISPLAY_NAME_RULE), { ok: false, problem: 'too_long', max: 50 });
    assert.deepEqual(typedName('x'.repeat(101), TOKEN_LABEL_RULE), { ok: false, problem: 'too_long', max: 100 });
  });
});

describe('the request schemas of typed names', () => {
  it('give the normalised name, or an issue saying what is wrong and where', () => {
    assert.equal(typedNameField(UNIT).parse(' 清州\u3000镇 '), '清州 镇');
    const refused = typedNameField(UNIT).safeParse('清州镇\u3164');
    assert.equal(refused.success, false);
    assert.match(refused.error.issues[0]!.message, /character 4 is U\+3164/);
  });

  it('are the ones of unit names, display names and token labels', () => {
    assert.equal(unitName.safeParse('清州镇\u3164').success, false);
    assert.equal(unitName.safeParse('沧州市\u2215青县').success, false);
    assert.equal(unitName.parse('e\u0301'), '\u00E9');
    assert.equal(displayNameField.safeParse('\u3164\u3164').success, false);
    assert.equal(displayNameField.parse('  '), null);
    assert.equal(displayNameField.parse(null), null);
    assert.equal(displayNameField.parse(' 王\u3000芳 '), '王 芳');
    assert.equal(newTokenRequest.safeParse({ label: 'scanner\u202Etxt.exe' }).success, false);
    assert.equal(newTokenRequest.parse({}).label, '');
    assert.equal(newTokenRequest.parse({ label: ' 二楼扫描仪 ' }).label, '二楼扫描仪');
  });
});
