import { useState } from 'preact/hooks';
import { translator, type Language } from '../../i18n/index.js';
import { ConfirmAction, CopyButton } from '../controls.js';

/** An account to hand over with its one-time password: created, imported, or its password reset. */
export interface SheetEntry {
  username: string;
  displayName: string | null;
  /** The unit's path as the server gave it. */
  unitText: string;
  password: string;
  kind: 'created' | 'imported' | 'reset';
}

/**
 * The one-time passwords made on this page, each kept until handed over: appended to, in order,
 * never replaced (a second 新建账号 keeps the first), until the administrator closes the sheet.
 */
export function useOpeningSheet() {
  const [entries, setEntries] = useState<SheetEntry[]>([]);
  return {
    entries,
    add: (more: SheetEntry[]) => setEntries((now) => [...now, ...more]),
    close: () => setEntries([]),
  };
}

/**
 * 账号开通单: the accounts made (or reset) in this session, each with its unit and one-time
 * password, what the clerk does with it and the date, on one printable sheet (printing the page
 * prints this sheet only: styles.css, @media print). Closing it, after a question, forgets them.
 */
export function OpeningSheet({
  language,
  entries,
  onClose,
}: {
  language: Language;
  entries: SheetEntry[];
  onClose: () => void;
}) {
  const t = translator(language);
  // The day it is handed over; fixed when the sheet opens, as a paper form would be dated.
  const [date] = useState(() => new Intl.DateTimeFormat(language, { dateStyle: 'long' }).format(new Date()));
  if (entries.length === 0) return null;
  const last = entries[entries.length - 1]!;
  return (
    <section class="card opening-sheet" aria-labelledby="opening-sheet-title">
      <h2 id="opening-sheet-title">{t('sheetTitle')}</h2>
      <p class="hint no-print">{t('sheetIntro')}</p>
      {/* Said to a screen reader as each account joins. */}
      <p class="visually-hidden" role="status">
        {t('sheetAdded', { user: last.username })}
      </p>
      <p class="sheet-date">{t('sheetDate', { date })}</p>
      <table class="files opening-sheet-rows">
        <thead>
          <tr>
            <th scope="col">{t('sheetAccount')}</th>
            <th scope="col">{t('displayName')}</th>
            <th scope="col">{t('sheetUnit')}</th>
            <th scope="col">{t('oneTimePassword')}</th>
            <th scope="col" class="signature">
              {t('sheetSigned')}
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e, i) => (
            <tr key={`${i}-${e.username}`} data-sheet-account={e.username}>
              <th scope="row">
                {e.username}
                {e.kind === 'reset' && <span class="sheet-reset"> {t('sheetReset')}</span>}
              </th>
              <td>{e.displayName ?? ''}</td>
              <td>{e.unitText}</td>
              <td>
                <code class="secret" data-secret>
                  {e.password}
                </code>{' '}
                <span class="no-print">
                  <CopyButton language={language} text={e.password} />
                </span>
              </td>
              <td class="signature" />
            </tr>
          ))}
        </tbody>
      </table>
      <p class="sheet-first-login">{t('sheetFirstLogin')}</p>
      <div class="toolbar no-print">
        <button type="button" onClick={() => window.print()}>
          {t('sheetPrint')}
        </button>
        <ConfirmAction
          language={language}
          label={t('sheetClose')}
          on=""
          question={t('sheetCloseConfirm')}
          confirm={t('sheetCloseYes')}
          onConfirm={onClose}
        />
      </div>
    </section>
  );
}
