import { useEffect, useState } from 'preact/hooks';
import { personLabel } from '../../../shared/accounts.js';
import { FILE_KINDS, type FileKind } from '../../../shared/file-types.js';
import {
  defaultFileOrder,
  FILE_SORTS,
  type FileSort,
  type FileSummary,
  type FileUploaders,
} from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { translator, type Language, type MessageKey } from '../i18n/index.js';
import { go, pageHash, withParams } from '../route.js';
import { canPreview, downloadUrl, FilePreview, type PreviewFile } from './file-preview.js';
import { DisposeButton } from './dispose-dialog.js';
import { formatBytes, formatCount, formatTime } from './format.js';
import { DayFields, FilterForm, type Values } from './reports/filters.js';
import { Field } from './field.js';
import { HoldFileButton } from './hold-file.js';
import { DEFAULT_PAGE_SIZE, pagingOf, type Paging, type Sorting } from './reports/query.js';
import { Pager } from './reports/table.js';
import type { Column } from './table/data-table.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';
import { TextSearchView } from './text-search.js';
import { FolderView } from './unit-folders.js';

const FILTERS = ['q', 'uploader', 'from', 'to', 'type'] as const;

const KIND_NAMES: Record<FileKind, MessageKey> = {
  pdf: 'fileKindPdf',
  image: 'fileKindImage',
  document: 'fileKindDocument',
  spreadsheet: 'fileKindSpreadsheet',
  other: 'fileKindOther',
};

/** The sorting the address asks for, if it is one the API knows (else the API's default applies). */
function sortingOf(params: URLSearchParams): Partial<Sorting> {
  const sort = params.get('sort');
  if (!(FILE_SORTS as readonly string[]).includes(sort ?? '')) return {};
  const order = params.get('order');
  return { sort: sort!, order: order === 'asc' || order === 'desc' ? order : defaultFileOrder(sort as FileSort) };
}

/** The API query of the view in the address: its filters, sorting and page (strict: nothing else). */
function filesQuery(params: URLSearchParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name)?.trim();
    if (value && (name !== 'type' || (FILE_KINDS as readonly string[]).includes(value))) query.set(name, value);
  }
  const { sort, order } = sortingOf(params);
  if (sort && order) {
    query.set('sort', sort);
    query.set('order', order);
  }
  const { limit, offset } = pagingOf(params);
  query.set('limit', String(limit));
  query.set('offset', String(offset));
  return query;
}

/**
 * 本单位文件: the unit's files (an administrator's: its reach's), found by any name or folder
 * they were uploaded under, filtered by uploader, first-upload day and type, sorted by any
 * column, a page at a time; every choice is kept in the address (reload, back and forward keep
 * it). PDFs and images open in an in-page viewer.
 */
export function MyUploadsPage({
  api,
  language,
  params,
  admin = false,
  canDispose = false,
  trashDays,
}: {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
  /** An administrator may hold (冻结) a file from here. */
  admin?: boolean;
  /** A top-level administrator: each file offers 销毁. */
  canDispose?: boolean;
  /** TRASH_DAYS, from the session: what the withdrawal dialog promises. */
  trashDays: number;
}) {
  const t = translator(language);
  // 按内容搜索: by the words of the files' texts (a view of its own, with its own search box).
  const byText = params.get('view') === 'text';
  // By folder unless the address asks for the latest uploads, or searches or sorts (across folders).
  const latest =
    !byText &&
    (params.get('view') === 'latest' || FILTERS.some((name) => params.get(name)) || params.get('sort') !== null);
  const key = latest ? filesQuery(params).toString() : null;
  const loaded = useLoaded(key, (query) => api.files(new URLSearchParams(query)));
  const [uploaders, setUploaders] = useState<FileUploaders['items']>([]);
  const [previewing, setPreviewing] = useState<PreviewFile | null>(null);

  useEffect(() => {
    // The choices of the uploader filter; without them the filter still works from the address.
    api.fileUploaders().then(
      (found) => setUploaders(found.items),
      () => setUploaders([]),
    );
  }, []);

  const show = (next: URLSearchParams) => go(pageHash('files', next));
  // A search or filter lists the matching files of every folder, newest first unless sorted otherwise.
  const filter = (values: Values) => show(withParams(params, { ...values, offset: null, path: null, view: 'latest' }));
  const { data: list, error } = loaded;
  const sorting: Sorting = list ? { sort: list.sort, order: list.order } : { sort: 'lastUpload', order: 'desc' };
  const sortBy = (sort: string) => {
    const order =
      sort === sorting.sort ? (sorting.order === 'asc' ? 'desc' : 'asc') : defaultFileOrder(sort as FileSort);
    show(withParams(params, { sort, order, offset: null }));
  };
  const page = (next: Paging) =>
    show(
      withParams(params, { limit: next.limit === DEFAULT_PAGE_SIZE ? null : next.limit, offset: next.offset || null }),
    );
  const n = (value: number) => formatCount(language, value);

  const columns: Column<FileSummary>[] = [
    { label: t('colName'), sort: 'name', className: 'name', cell: (f) => <FileNames language={language} file={f} /> },
    { label: t('colUploaders'), className: 'uploaders', cell: (f) => uploadersText(language, f) },
    { label: t('colSize'), sort: 'size', numeric: true, cell: (f) => formatBytes(f.fileLength) },
    { label: t('colFirstUpload'), sort: 'firstUpload', cell: (f) => formatTime(language, f.uploadDate) },
    { label: t('colLastUpload'), sort: 'lastUpload', cell: (f) => formatTime(language, f.lastUploadTime) },
    { label: t('colUnitCount'), sort: 'unitCount', numeric: true, className: 'count', cell: (f) => n(f.uploadCount) },
    { label: t('colMyCount'), sort: 'myCount', numeric: true, className: 'count', cell: (f) => n(f.myUploadCount) },
    {
      label: t('download'),
      className: 'actions',
      cell: (f) => (
        <>
          {canPreview(f) ? (
            <button
              type="button"
              class="secondary small"
              aria-label={`${t('preview')} ${f.fileName}`}
              onClick={() => setPreviewing(f)}
            >
              {t('preview')}
            </button>
          ) : (
            <span class="no-preview">{t('noPreview')}</span>
          )}{' '}
          <a href={downloadUrl(f.fileId)} download={baseName(f.fileName)} aria-label={`${t('download')} ${f.fileName}`}>
            {t('download')}
          </a>
          {admin && <HoldFileButton api={api} language={language} file={f} />}
          {canDispose && (
            <>
              {' '}
              <DisposeButton
                api={api}
                language={language}
                small
                what={t('disposeFileWhat', { name: f.fileName })}
                label={`${t('dispose')} ${f.fileName}`}
                target={{ fileIds: [f.fileId] }}
              />
            </>
          )}
        </>
      ),
    },
  ];

  return (
    <main class="page wide" aria-labelledby="files-title">
      <h1 id="files-title">{t('myUploadsTitle')}</h1>
      <nav class="tabs view-switch" aria-label={t('filesView')}>
        <a href={pageHash('files', new URLSearchParams())} aria-current={latest || byText ? undefined : 'page'}>
          {t('viewFolders')}
        </a>
        <a href={pageHash('files', new URLSearchParams({ view: 'latest' }))} aria-current={latest ? 'page' : undefined}>
          {t('viewLatest')}
        </a>
        <a href={pageHash('files', new URLSearchParams({ view: 'text' }))} aria-current={byText ? 'page' : undefined}>
          {t('viewByText')}
        </a>
      </nav>
      {byText && <TextSearchView api={api} language={language} params={params} />}
      {!byText && (
        <FilterForm key={params.toString()} language={language} names={FILTERS} onApply={filter} error={error}>
          {(errors) => (
            <>
              <div class="more-fields">
                <Field label={t('filesSearch')} errors={errors} class="wide">
                  <input
                    type="search"
                    name="q"
                    maxLength={200}
                    placeholder={t('search')}
                    defaultValue={params.get('q') ?? ''}
                  />
                </Field>
                <Field label={t('colUploaders')} errors={errors}>
                  <select name="uploader" defaultValue={params.get('uploader') ?? ''}>
                    <option value="">{t('filesAnyUploader')}</option>
                    {uploaders.map((u) => (
                      <option key={u.id} value={u.username}>
                        {personLabel(u.username, u.displayName, language)}
                      </option>
                    ))}
                    {/* A login from a link that the list does not (yet) hold stays chosen. */}
                    {params.get('uploader') && !uploaders.some((u) => u.username === params.get('uploader')) && (
                      <option value={params.get('uploader')!}>{params.get('uploader')}</option>
                    )}
                  </select>
                </Field>
                <Field label={t('filesType')} errors={errors}>
                  <select name="type" defaultValue={params.get('type') ?? ''}>
                    <option value="">{t('filesAnyType')}</option>
                    {FILE_KINDS.map((kind) => (
                      <option key={kind} value={kind}>
                        {t(KIND_NAMES[kind])}
                      </option>
                    ))}
                  </select>
                </Field>
              </div>
              <fieldset class="dates">
                <legend>{t('colFirstUpload')}</legend>
                <DayFields language={language} params={params} errors={errors} />
              </fieldset>
            </>
          )}
        </FilterForm>
      )}
      {!latest && !byText && <FolderView api={api} language={language} params={params} trashDays={trashDays} />}
      {latest && (
        <TableSection
          language={language}
          label={t('myUploadsTitle')}
          loaded={loaded}
          showError={false}
          empty={t('noFiles')}
          columns={columns}
          rowKey={(f) => f.fileId}
          sorting={sorting}
          onSort={sortBy}
          tableClass="report files"
          pager={(total) => <Pager language={language} total={total} paging={pagingOf(params)} onPage={page} />}
        />
      )}
      {previewing && <FilePreview language={language} file={previewing} onClose={() => setPreviewing(null)} />}
    </main>
  );
}

const baseName = (path: string) => path.split('/').pop() ?? path;

/** The name shown, and under it the other names the unit uploaded the same content under (folded away when many). */
function FileNames({ language, file }: { language: Language; file: FileSummary }) {
  const t = translator(language);
  const others = file.names.filter((name) => name !== file.fileName);
  const count = file.nameCount - (file.names.includes(file.fileName) ? 1 : 0);
  const list = (
    <ul>
      {others.map((name) => (
        <li key={name}>{name}</li>
      ))}
      {count > others.length && <li class="more">{t('moreNamesNotShown', { count: count - others.length })}</li>}
    </ul>
  );
  return (
    <>
      <span class="file-name">{file.fileName}</span>
      {count > 0 &&
        (count <= 2 ? (
          <div class="also">
            <span>{t('alsoUploadedAs', { count })}</span>
            {list}
          </div>
        ) : (
          <details class="also">
            <summary>{t('alsoUploadedAs', { count })}</summary>
            {list}
          </details>
        ))}
    </>
  );
}

function uploadersText(language: Language, file: FileSummary): string {
  const t = translator(language);
  const names = file.uploaders
    .map((login, i) => personLabel(login, file.uploaderDisplayNames[i], language))
    .join(language === 'zh-CN' ? '、' : ', ');
  const more = file.uploaderCount - file.uploaders.length;
  return more > 0 ? `${names} ${t('moreUploaders', { count: file.uploaderCount })}` : names;
}
