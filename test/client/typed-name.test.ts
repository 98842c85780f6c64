import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DISPLAY_NAME_RULE, TOKEN_LABEL_RULE } from '../../shared/accounts.js';
import { UNIT_NAME_RULE } from '../../shared/units.js';
import { translator } from '../../client/src/i18n/index.js';
import { displayNameProblems, nameProblems } from '../../client/src/pages/typed-name.js';

/**
 * The pages check a typed name with the server's own function before sending it, and say what is
 * wrong at the field in the page's language: the browser never sends a name the server refuses.
 */
describe('a typed name’s problem at its field', () => {
  const zh = translator('zh-CN');
  const en = translator('en');

  it('names the hidden character of a unit’s name, and says a name that shows nothing needs one', () => {
    assert.deepEqual(nameProblems(zh, '清州镇\u3164', UNIT_NAME_RULE, 'name'), {
      name: zh('nameHidden', { character: 'U+3164' }),
    });
    assert.match(nameProblems(zh, '清州镇\u3164', UNIT_NAME_RULE, 'name').name!, /U\+3164/);
    assert.match(nameProblems(en, '清州\u2028镇', UNIT_NAME_RULE, 'name').name!, /this has U\+2028/);
    assert.deepEqual(nameProblems(en, '\u0301', UNIT_NAME_RULE, 'name'), { name: en('nameNoVisible') });
    assert.deepEqual(nameProblems(zh, '   ', UNIT_NAME_RULE, 'name'), { name: zh('fieldRequired') });
  });

  it('refuses a slash or its lookalike in a unit’s name only', () => {
    assert.match(nameProblems(zh, '沧州市\u2215青县', UNIT_NAME_RULE, 'name').name!, /U\+2215/);
    assert.deepEqual(nameProblems(zh, '甲\u2215乙', DISPLAY_NAME_RULE, 'displayName'), {});
  });

  it('words a person’s name as 姓名, and takes an empty one as none', () => {
    assert.deepEqual(displayNameProblems(zh, '\u3164\u3164'), { displayName: zh('displayNameHidden') });
    assert.deepEqual(displayNameProblems(zh, '长'.repeat(51)), { displayName: zh('displayNameTooLong', { max: 50 }) });
    assert.deepEqual(displayNameProblems(zh, ''), {});
  });

  it('checks a token’s label: none is fine, an override is not', () => {
    assert.deepEqual(nameProblems(en, '', TOKEN_LABEL_RULE, 'label'), {});
    assert.deepEqual(nameProblems(en, 'scan\u202Ener', TOKEN_LABEL_RULE, 'label'), {
      label: en('nameHidden', { character: 'U+202E' }),
    });
    assert.deepEqual(nameProblems(en, 'x'.repeat(101), TOKEN_LABEL_RULE, 'label'), {
      label: en('nameTooLong', { max: 100 }),
    });
  });
});
