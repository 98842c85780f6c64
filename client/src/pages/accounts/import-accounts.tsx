import { useState } from 'preact/hooks';
import type { ImportFileReason } from '../../../../shared/accounts.js';
import { ImportRefused, type ArchiveApi, type ImportedFile } from '../../api.js';
import { ApiError, describeError, translator, type Language } from '../../i18n/index.js';
import { Field, FormProblem, useCheckedForm } from '../field.js';
import { formatBytes } from '../format.js';
import { answerRows, IMPORT_TEMPLATE } from './import-answer.js';
import { ImportRefusal } from './import-refusal.js';
import type { SheetEntry } from './opening-sheet.js';

/** The import's answer: how many it made, a download of it, the server's copy to forget once saved, what it skipped. */
interface Imported {
  count: number;
  url: string;
  keptUrl: string | null;
  skipped: ImportedFile['skipped'];
}

/**
 * Accounts created from an Excel workbook or a CSV file: the template, the file, and the answer;
 * the accounts with their one-time passwords go to the 账号开通单 (onImported).
 */
export function ImportAccounts({
  api,
  language,
  onImported,
}: {
  api: ArchiveApi;
  language: Language;
  /** keptUrl: where the server keeps a copy of the answer until it is downloaded. */
  onImported: (keptUrl: string | null, entries: SheetEntry[]) => void;
}) {
  const t = translator(language);
  const [refused, setRefused] = useState<ImportRefused | null>(null);
  const [result, setResult] = useState<Imported | null>(null);
  const [templateUrl] = useState(() => URL.createObjectURL(new Blob([IMPORT_TEMPLATE], { type: 'text/csv' })));
  const chosen = (form: FormData) => {
    const file = form.get('file');
    return file instanceof File && file.size > 0 ? file : null;
  };
  const { ref, errors, submit } = useCheckedForm({
    language,
    t,
    // A file the server cannot read as accounts is the file's problem.
    places: {
      fields: ['file'],
      codes: {
        validation_failed: { field: 'file' },
        payload_too_large: { field: 'file' },
        bad_request: { field: 'file' },
      },
      describe: (e) => describeImportError(language, e),
    },
    check: (form): Record<string, string> => (chosen(form) ? {} : { file: t('importPickFile') }),
    send: async (form) => {
      setRefused(null);
      setResult(null);
      try {
        const { csv, keptUrl, skipped } = await api.importAccounts(chosen(form)!);
        // The answer's columns: username, name, role, unit, one-time password.
        const entries = answerRows(csv).map(
          ([username = '', name = '', , unitText = '', password = '']): SheetEntry => ({
            username,
            displayName: name || null,
            unitText,
            password,
            kind: 'imported',
          }),
        );
        setResult({
          count: entries.length,
          url: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })),
          keptUrl,
          skipped,
        });
        onImported(keptUrl, entries);
      } catch (e) {
        // Refused rows are listed below the form, each with its line.
        if (e instanceof ImportRefused) setRefused(e);
        else throw e;
      }
    },
  });

  return (
    <form class="card panel" ref={ref} onSubmit={submit} aria-labelledby="import-title" noValidate>
      <h2 id="import-title">{t('accountImport')}</h2>
      <p class="hint">{t('importIntro')}</p>
      <p>
        <a href={templateUrl} download={t('importTemplateName')}>
          {t('importTemplate')}
        </a>
      </p>
      <Field label={t('importFile')} errors={errors}>
        <input
          name="file"
          type="file"
          accept=".xlsx,.csv,text/csv,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
          required
        />
      </Field>
      <button type="submit">{t('importButton')}</button>
      <FormProblem errors={errors} />
      {refused && <ImportRefusal language={language} refused={refused} />}
      {result && <ImportDone api={api} language={language} result={result} />}
    </form>
  );
}

/** Why the file as a whole was refused, in the reader's words; the server's own words for anything else. */
export function describeImportError(language: Language, error: unknown): string {
  const t = translator(language);
  if (error instanceof ApiError && error.code === 'validation_failed') {
    const reason = error.details as Partial<ImportFileReason>;
    switch (reason.reason) {
      case 'not_a_table':
        return t('importNotTable', { problem: String(reason.problem ?? '') });
      case 'not_a_workbook':
        return t('importNotWorkbook');
      case 'old_excel':
        return t('importOldExcel');
      case 'sheet_too_large':
        return t('importSheetTooLarge', { limit: formatBytes(Number(reason.maxBytes)) });
      case 'no_accounts':
        return t(Number(reason.examples) > 0 ? 'importNoAccountsExample' : 'importNoAccounts');
      case 'too_many_rows':
        return t('importTooManyRows', { rows: Number(reason.rows), max: Number(reason.max) });
    }
  }
  return describeError(language, error);
}

/** What the import made and skipped, and the answer to download (the passwords are on the 账号开通单). */
function ImportDone({ api, language, result }: { api: ArchiveApi; language: Language; result: Imported }) {
  const t = translator(language);
  return (
    <div class="handover" role="status">
      <p>{t('importDone', { count: result.count })}</p>
      {result.skipped.examples.length > 0 && (
        <p>{t('importSkippedExamples', { lines: result.skipped.examples.join(language === 'zh-CN' ? '、' : ', ') })}</p>
      )}
      {result.skipped.blank > 0 && <p>{t('importSkippedBlank', { count: result.skipped.blank })}</p>}
      <p>
        <a
          href={result.url}
          download={t('importResultName')}
          // Saved here: the server's copy is no longer needed (if forgetting fails, it stays listed).
          onClick={() => {
            if (result.keptUrl) api.forgetKeptImport(result.keptUrl).catch(() => {});
          }}
        >
          {t('importDownload')}
        </a>
      </p>
    </div>
  );
}
