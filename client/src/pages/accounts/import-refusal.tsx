import type { ImportProblem } from '../../../../shared/accounts.js';
import type { ImportRefused } from '../../api.js';
import { translator, type Language, type Translate } from '../../i18n/index.js';

/** Why the server refused an import: every refused row, with its line and its problems. */
export function ImportRefusal({ language, refused }: { language: Language; refused: ImportRefused }) {
  const t = translator(language);
  return (
    <div role="alert" class="error">
      <p>{t('importRefused', { count: refused.rows.length })}</p>
      <ul>
        {refused.rows.map((r) => (
          <li key={r.line}>
            {t('importRow', {
              line: r.line,
              user: r.username,
              problems: (r.codes ?? []).map((p) => importProblemText(t, p)).join(language === 'zh-CN' ? '；' : '; '),
            })}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A row's problem in the reader's words. */
function importProblemText(t: Translate, p: ImportProblem): string {
  switch (p.code) {
    case 'too_many_columns':
      return t('importTooManyColumns');
    case 'bad_name':
      return t('importBadName');
    case 'bad_role':
      return t('importBadRole', { role: p.role });
    case 'bad_username':
      return t('importBadUsername');
    case 'username_repeated':
      return t('importUsernameRepeated', { line: p.line });
    case 'username_taken':
      return t('importUsernameTaken');
    case 'username_unavailable':
      return t('importUsernameUnavailable');
    case 'no_unit':
      return t('importNoUnit');
    case 'unit_outside_reach':
      return t('importUnitOutside', { unit: p.unit });
    case 'unit_unknown':
      return p.closest
        ? t('importUnitUnknownClosest', {
            unit: p.unit,
            name: p.closest.name,
            code: p.closest.id,
            path: p.closest.path,
          })
        : t('importUnitUnknown', { unit: p.unit });
    case 'unit_not_for_role':
      return t(p.role === 'admin' ? 'importUnitNotForAdmin' : 'importUnitNotForClerk', { unit: p.unit });
  }
}
