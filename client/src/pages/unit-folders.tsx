import { useState } from 'preact/hooks';
import { personLabel } from '../../../shared/accounts.js';
import type { FolderFileSummary, WithdrawableUploads } from '../../../shared/schemas.js';
import { WITHDRAW_MAX_UPLOADS, type WithdrawalReason } from '../../../shared/withdrawals.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { go, pageHash, withParams } from '../route.js';
import { canPreview, downloadUrl, FilePreview, type PreviewFile } from './file-preview.js';
import { formatBytes, formatCount, formatTime } from './format.js';
import { DEFAULT_PAGE_SIZE, pagingOf, type Paging } from './reports/query.js';
import { Pager } from './reports/table.js';
import { useLoaded } from './table/use-loaded.js';
import { WithdrawDialog } from './withdraw-dialog.js';

/** The API query of the folder in the address: its path and page. */
function folderQuery(params: URLSearchParams): URLSearchParams {
  const query = new URLSearchParams();
  query.set('path', params.get('path') ?? '');
  const { limit, offset } = pagingOf(params);
  query.set('limit', String(limit));
  query.set('offset', String(offset));
  return query;
}

/** What 撤回 is asked for: some files (by id), or a whole folder (by path); and its words. */
type Target = { what: string } & ({ files: string[] } | { folder: string });

/** What the page says after 撤回: done (and what was left), nothing to withdraw, or a refusal. */
type Notice =
  | { kind: 'done'; withdrawn: number; found: WithdrawableUploads }
  | { kind: 'nothing'; found: WithdrawableUploads }
  | { kind: 'error'; error: unknown };

/** 撤回 once the archive has said which uploads it would take back. */
type Withdrawing = { target: Target; found: WithdrawableUploads };

/**
 * 本单位文件 as a 网盘: a folder's path as a breadcrumb (each step a link up to it), its sub-folders
 * (with how many files lie under each) and then its files, by name, a page at a time; the folder
 * and page are kept in the address. 撤回 takes back a file, the selected files or a whole folder:
 * the archive first says which uploads that is (a clerk's own within WITHDRAW_DAYS, an
 * administrator's any in reach) and how many a clerk may not take back.
 */
export function FolderView({
  api,
  language,
  params,
  trashDays,
}: {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
  trashDays: number;
}) {
  const t = translator(language);
  const key = folderQuery(params).toString();
  const [reloads, setReloads] = useState(0);
  const loaded = useLoaded(`${key}#${reloads}`, (query) => api.folder(new URLSearchParams(query.split('#')[0])));
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [previewing, setPreviewing] = useState<PreviewFile | null>(null);
  const [withdrawing, setWithdrawing] = useState<Withdrawing | null>(null);
  // Kept as what happened, not as words: a change of language says it again in the new one.
  const [notice, setNotice] = useState<Notice | null>(null);
  const path = (params.get('path') ?? '').replace(/^\/+|\/+$/g, '');
  const steps = path === '' ? [] : path.split('/');
  const n = (value: number) => formatCount(language, value);

  const open = (next: string) => {
    setSelected(new Set());
    setNotice(null);
    go(pageHash('files', withParams(params, { path: next || null, offset: null })));
  };
  const page = (next: Paging) =>
    go(
      pageHash(
        'files',
        withParams(params, {
          limit: next.limit === DEFAULT_PAGE_SIZE ? null : next.limit,
          offset: next.offset || null,
        }),
      ),
    );
  const toggle = (fileId: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(fileId);
    else next.delete(fileId);
    setSelected(next);
  };
  /** Asks the archive what 撤回 would take back, then opens the dialog (or says why nothing can be). */
  const ask = async (target: Target) => {
    setNotice(null);
    try {
      const found = await api.withdrawable('folder' in target ? { folder: target.folder } : { files: target.files });
      if (found.uploads.length > 0) setWithdrawing({ target, found });
      else setNotice({ kind: 'nothing', found });
    } catch (e) {
      setNotice({ kind: 'error', error: e });
    }
  };
  const withdraw = async ({ found }: Withdrawing, reason: WithdrawalReason, note: string) => {
    const ids = found.uploads.map((u) => u.uploadId);
    let withdrawn = 0;
    for (let at = 0; at < ids.length; at += WITHDRAW_MAX_UPLOADS) {
      const answer = await api.withdraw({
        reason,
        ...(note ? { note } : {}),
        uploads: ids.slice(at, at + WITHDRAW_MAX_UPLOADS),
      });
      withdrawn += answer.withdrawn.length;
    }
    setSelected(new Set());
    setNotice({ kind: 'done', withdrawn, found });
    setReloads(reloads + 1);
  };

  const { data: list, error } = loaded;
  const joined = (step: number) => steps.slice(0, step + 1).join('/');
  const inside = (name: string) => (path === '' ? name : `${path}/${name}`);
  const files = list?.files ?? [];
  return (
    <section class="folder-view" aria-labelledby="folder-title">
      <nav class="breadcrumb folder-path" aria-label={t('folderPath')}>
        <ol>
          <li>
            {steps.length === 0 ? (
              <span aria-current="page">{t('folderTop')}</span>
            ) : (
              <a href={pageHash('files', withParams(params, { path: null, offset: null }))}>{t('folderTop')}</a>
            )}
          </li>
          {steps.map((step, i) => (
            <li key={i}>
              {i === steps.length - 1 ? (
                <span aria-current="page">{step}</span>
              ) : (
                <a href={pageHash('files', withParams(params, { path: joined(i), offset: null }))}>{step}</a>
              )}
            </li>
          ))}
        </ol>
      </nav>
      <h2 id="folder-title" class="visually-hidden">
        {steps.length === 0 ? t('folderTop') : steps[steps.length - 1]}
      </h2>
      <div class="upload-actions">
        {path !== '' && (
          <button type="button" class="secondary" onClick={() => open(steps.slice(0, -1).join('/'))}>
            {t('folderUp')}
          </button>
        )}
        {selected.size > 0 && (
          <button
            type="button"
            class="danger"
            onClick={() => void ask({ files: [...selected], what: t('withdrawSelectedWhat') })}
          >
            {t('withdrawSelected', { count: n(selected.size) })}
          </button>
        )}
        {path !== '' && list && list.folderTotal + list.fileTotal > 0 && (
          <button
            type="button"
            class="secondary"
            onClick={() => void ask({ folder: path, what: t('folderWhat', { name: steps[steps.length - 1]! }) })}
          >
            {t('withdrawFolder')}
          </button>
        )}
      </div>
      {notice && (
        <p role="status" class="notice">
          {notice.kind === 'error'
            ? describeError(language, notice.error)
            : notice.kind === 'nothing'
              ? `${t('withdrawNothing')} ${refusedText(language, notice.found)}`
              : `${t('withdrawDone', { count: n(notice.withdrawn) })} ${refusedText(language, notice.found)}`}{' '}
          {notice.kind === 'done' && <a href="#/trash">{t('navTrash')}</a>}
        </p>
      )}
      {error !== null && error !== undefined && (
        <p role="alert" class="error">
          {describeError(language, error)}
        </p>
      )}
      <table class="files folders" aria-busy={loaded.loading ? 'true' : undefined} aria-labelledby="folder-title">
        <thead>
          <tr>
            <th scope="col" class="pick">
              <span class="visually-hidden">{t('withdrawPick')}</span>
            </th>
            <th scope="col">{t('colEntryName')}</th>
            <th scope="col" class="num">
              {t('colSize')}
            </th>
            <th scope="col">{t('colUploaders')}</th>
            <th scope="col">{t('colLastUpload')}</th>
            <th scope="col" class="num">
              {t('colUnitCount')}
            </th>
            <th scope="col">{t('colActions')}</th>
          </tr>
        </thead>
        <tbody>
          {list?.folders.map((folder) => (
            <tr key={`folder:${folder.name}`} class="folder-row">
              <td class="pick" />
              <td class="name">
                <a
                  href={pageHash('files', withParams(params, { path: inside(folder.name), offset: null }))}
                  class="folder-name"
                >
                  <FolderIcon />
                  {folder.name}
                </a>
              </td>
              <td class="num">{t('folderFiles', { count: n(folder.files) })}</td>
              <td />
              <td />
              <td />
              <td class="actions">
                <button
                  type="button"
                  class="secondary small"
                  aria-label={`${t('withdraw')} ${folder.name}`}
                  onClick={() =>
                    void ask({ folder: inside(folder.name), what: t('folderWhat', { name: folder.name }) })
                  }
                >
                  {t('withdraw')}
                </button>
              </td>
            </tr>
          ))}
          {files.map((f) => (
            <FileRow
              key={`file:${f.path}:${f.fileId}`}
              language={language}
              file={f}
              selected={selected.has(f.fileId)}
              onToggle={(on) => toggle(f.fileId, on)}
              onPreview={() => setPreviewing({ ...f, fileName: inside(f.path) })}
              onWithdraw={() => void ask({ files: [f.fileId], what: f.path })}
            />
          ))}
          {list && list.folders.length + files.length === 0 && (
            <tr>
              <td colSpan={7} class="empty">
                {t('folderEmpty')}
              </td>
            </tr>
          )}
        </tbody>
      </table>
      {list && (
        <Pager language={language} total={list.folderTotal + list.fileTotal} paging={pagingOf(params)} onPage={page} />
      )}
      {previewing && <FilePreview language={language} file={previewing} onClose={() => setPreviewing(null)} />}
      {withdrawing && (
        <WithdrawDialog
          language={language}
          trashDays={trashDays}
          what={withdrawing.target.what}
          count={withdrawing.found.uploads.length}
          onWithdraw={(reason, note) => withdraw(withdrawing, reason, note)}
          onClose={() => setWithdrawing(null)}
        />
      )}
    </section>
  );
}

/** A folder's outline (drawn: the fonts of an office PC may have no emoji). */
function FolderIcon() {
  return (
    <svg class="folder-icon" aria-hidden="true" viewBox="0 0 20 16" width="20" height="16">
      <path
        d="M1 3a1 1 0 0 1 1-1h5l2 2h9a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1H2a1 1 0 0 1-1-1z"
        fill="#f4c542"
        stroke="#b8860b"
      />
    </svg>
  );
}

function FileRow({
  language,
  file: f,
  selected,
  onToggle,
  onPreview,
  onWithdraw,
}: {
  language: Language;
  file: FolderFileSummary;
  selected: boolean;
  onToggle: (on: boolean) => void;
  onPreview: () => void;
  onWithdraw: () => void;
}) {
  const t = translator(language);
  const uploaders = f.uploaders
    .map((login, i) => personLabel(login, f.uploaderDisplayNames[i], language))
    .join(language === 'zh-CN' ? '、' : ', ');
  const more = f.uploaderCount - f.uploaders.length;
  return (
    <tr class="file-row">
      <td class="pick">
        <input
          type="checkbox"
          checked={selected}
          aria-label={t('withdrawPickRow', { name: f.path })}
          onChange={(e) => onToggle((e.target as HTMLInputElement).checked)}
        />
      </td>
      <td class="name">
        <span class="file-name">{f.path}</span>
      </td>
      <td class="num">{formatBytes(f.fileLength)}</td>
      <td class="uploaders">
        {more > 0 ? `${uploaders} ${t('moreUploaders', { count: f.uploaderCount })}` : uploaders}
      </td>
      <td>{formatTime(language, f.lastUploadTime)}</td>
      <td class="num">{formatCount(language, f.uploadCount)}</td>
      <td class="actions">
        {canPreview(f) ? (
          <button type="button" class="secondary small" aria-label={`${t('preview')} ${f.path}`} onClick={onPreview}>
            {t('preview')}
          </button>
        ) : (
          <span class="no-preview">{t('noPreview')}</span>
        )}
        <a href={downloadUrl(f.fileId)} download={f.path} aria-label={`${t('download')} ${f.path}`}>
          {t('download')}
        </a>
        <button type="button" class="secondary small" aria-label={`${t('withdraw')} ${f.path}`} onClick={onWithdraw}>
          {t('withdraw')}
        </button>
      </td>
    </tr>
  );
}

/** Why some uploads there are not offered: a colleague's, or older than WITHDRAW_DAYS (a clerk's). */
function refusedText(language: Language, found: WithdrawableUploads): string {
  const t = translator(language);
  const parts = [
    ...(found.othersUploads > 0 ? [t('withdrawOthers', { count: formatCount(language, found.othersUploads) })] : []),
    ...(found.tooOld > 0 ? [t('withdrawTooOld', { count: formatCount(language, found.tooOld) })] : []),
  ];
  return parts.join(' ');
}
