import { useState } from 'preact/hooks';
import { ImportRefused, type ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { Field, FormProblem, useCheckedForm } from '../field.js';
import { answerRows, IMPORT_TEMPLATE } from './import-answer.js';
import { ImportRefusal } from './import-refusal.js';

/** The import's answer: its rows, a download of it, and the server's copy to forget once saved. */
interface Imported {
  rows: string[][];
  url: string;
  keptUrl: string | null;
}

/** Accounts created from a CSV file: the template, the file, and the answer with the one-time passwords. */
export function ImportAccounts({
  api,
  language,
  onImported,
}: {
  api: ArchiveApi;
  language: Language;
  /** keptUrl: where the server keeps a copy of the answer until it is downloaded. */
  onImported: (keptUrl: string | null) => void;
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
    places: { fields: ['file'], codes: { validation_failed: { field: 'file' }, payload_too_large: { field: 'file' } } },
    check: (form): Record<string, string> => (chosen(form) ? {} : { file: t('importPickFile') }),
    send: async (form) => {
      setRefused(null);
      setResult(null);
      try {
        const { csv, keptUrl } = await api.importAccounts(chosen(form)!);
        const rows = answerRows(csv);
        setResult({ rows, url: URL.createObjectURL(new Blob([csv], { type: 'text/csv' })), keptUrl });
        onImported(keptUrl);
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
        <input name="file" type="file" accept=".csv,text/csv" required />
      </Field>
      <button type="submit">{t('importButton')}</button>
      <FormProblem errors={errors} />
      {refused && <ImportRefusal language={language} refused={refused} />}
      {result && <ImportedAccounts api={api} language={language} result={result} />}
    </form>
  );
}

/** The accounts an import made, with their one-time passwords, once, and the answer to download. */
function ImportedAccounts({ api, language, result }: { api: ArchiveApi; language: Language; result: Imported }) {
  const t = translator(language);
  return (
    <div class="handover" role="status">
      <p>{t('importDone', { count: result.rows.length })}</p>
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
      <table class="files">
        <thead>
          <tr>
            <th scope="col">{t('username')}</th>
            <th scope="col">{t('displayName')}</th>
            <th scope="col">{t('oneTimePassword')}</th>
          </tr>
        </thead>
        <tbody>
          {/* The answer's columns: username, name, role, unit, one-time password. */}
          {result.rows.map((r) => (
            <tr key={r[0]}>
              <td>{r[0]}</td>
              <td>{r[1]}</td>
              <td class="secret">{r[4]}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
