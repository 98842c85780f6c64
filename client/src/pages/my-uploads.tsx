import { useEffect, useState } from 'preact/hooks';
import type { FileList } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { formatBytes } from './format.js';
import { formText } from './form-text.js';
import { Pager } from './controls.js';

const PAGE_SIZE = 50;

/** The clerk's own and unit's files, searchable by name, with downloads and upload counts. */
export function MyUploadsPage({ api, language }: { api: ArchiveApi; language: Language }) {
  const t = translator(language);
  const [query, setQuery] = useState('');
  const [offset, setOffset] = useState(0);
  const [list, setList] = useState<FileList | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    let current = true;
    setError(null);
    api.files({ q: query || undefined, limit: PAGE_SIZE, offset }).then(
      (result) => current && setList(result),
      (e: unknown) => current && setError(e),
    );
    return () => {
      current = false;
    };
  }, [query, offset]);

  const search = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setOffset(0);
    setQuery(formText(form, 'q').trim());
  };
  const dateFormat = new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' });

  return (
    <main class="page" aria-labelledby="files-title">
      <h1 id="files-title">{t('myUploadsTitle')}</h1>
      <form role="search" class="search" onSubmit={search}>
        <label>
          <span class="visually-hidden">{t('search')}</span>
          <input name="q" type="search" placeholder={t('search')} maxLength={200} defaultValue={query} />
        </label>
        <button type="submit">{t('searchButton')}</button>
      </form>
      {error !== null && (
        <p role="alert" class="error">
          {describeError(language, error)}
        </p>
      )}
      {list === null && error === null && <p>{t('loading')}</p>}
      {list !== null && list.items.length === 0 && <p>{t('noFiles')}</p>}
      {list !== null && list.items.length > 0 && (
        <table class="files">
          <thead>
            <tr>
              <th scope="col">{t('colName')}</th>
              <th scope="col" class="num">
                {t('colSize')}
              </th>
              <th scope="col">{t('colFirstUpload')}</th>
              <th scope="col" class="num">
                {t('colUnitCount')}
              </th>
              <th scope="col" class="num">
                {t('colMyCount')}
              </th>
              <th scope="col">
                <span class="visually-hidden">{t('download')}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((file) => (
              <tr key={file.fileId} data-file-id={file.fileId}>
                <td class="name">{file.fileName}</td>
                <td class="num">{formatBytes(file.fileLength)}</td>
                <td>{dateFormat.format(new Date(file.uploadDate))}</td>
                <td class="num">{file.uploadCount}</td>
                <td class="num">{file.myUploadCount}</td>
                <td>
                  <a
                    href={`/api/files/${file.fileId}`}
                    download={file.fileName}
                    aria-label={`${t('download')} ${file.fileName}`}
                  >
                    {t('download')}
                  </a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list !== null && (
        <Pager language={language} total={list.total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
      )}
    </main>
  );
}
