import { useState } from 'preact/hooks';
import type { FileUploadView } from '../../../shared/withdrawals.js';
import type { ArchiveApi } from '../api.js';
import { translator, type Language } from '../i18n/index.js';
import { Pager } from './controls.js';
import { formatBytes, formatCount, formatTime, unitPlace } from './format.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';
import { WithdrawDialog } from './withdraw-dialog.js';

const PAGE_SIZE = 100;

/**
 * 上传记录: every upload of one file the caller sees (who, from which unit, when, under which
 * name), reached from the reports (an entry's upload count, a cross-unit file's uploads). Where an
 * administrator withdraws others' uploads of their reach: one by its 撤回, or those ticked.
 */
export function FileUploadsPage({
  api,
  language,
  fileId,
  admin,
  trashDays,
}: {
  api: ArchiveApi;
  language: Language;
  fileId: string;
  admin: boolean;
  /** TRASH_DAYS, from the session: what the withdrawal dialog promises. */
  trashDays: number;
}) {
  const t = translator(language);
  const [offset, setOffset] = useState(0);
  // Bumped after a withdrawal, so the list is read again.
  const [version, setVersion] = useState(0);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [withdrawing, setWithdrawing] = useState<{ uploads: string[]; what: string } | null>(null);
  const [done, setDone] = useState<number | null>(null);
  const loaded = useLoaded(`${fileId}:${offset}:${version}`, () =>
    api.fileUploads(fileId, { limit: PAGE_SIZE, offset }),
  );
  const items = loaded.data?.items ?? [];
  const name = items[0]?.fileName.split('/').pop() ?? '';
  const toggle = (uploadId: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(uploadId);
    else next.delete(uploadId);
    setSelected(next);
  };
  const withdraw = async (uploads: string[], reason: Parameters<typeof api.withdraw>[0]['reason'], note: string) => {
    const answer = await api.withdraw({ uploads, reason, ...(note ? { note } : {}) });
    setDone(answer.withdrawn.length);
    setSelected(new Set());
    setVersion(version + 1);
  };
  const state = (u: FileUploadView) =>
    u.withdrawal ? (
      <span class="withdrawn">
        {t('fileUploadWithdrawn', {
          time: formatTime(language, u.withdrawal.withdrawnAt),
          user: u.withdrawal.withdrawnBy,
        })}
      </span>
    ) : u.counts ? (
      t('fileUploadCounts')
    ) : (
      t('fileUploadNotCounted')
    );
  return (
    <main class="page" aria-labelledby="file-uploads-title">
      <h1 id="file-uploads-title">{name ? t('fileUploadsOf', { name }) : t('fileUploadsTitle')}</h1>
      <p class="hint">{t(admin ? 'fileUploadsHintAdmin' : 'fileUploadsHint')}</p>
      {done !== null && (
        <p role="status" class="notice">
          {t('withdrawDone', { count: formatCount(language, done) })} <a href="#/trash">{t('navTrash')}</a>
        </p>
      )}
      <TableSection
        language={language}
        label={t('fileUploadsTitle')}
        loaded={loaded}
        empty={t('fileUploadsEmpty')}
        tools={(list) =>
          list.items.some((u) => u.canWithdraw) && (
            <button
              type="button"
              class="secondary"
              disabled={selected.size === 0}
              onClick={() => setWithdrawing({ uploads: [...selected], what: t('withdrawSelectedWhat') })}
            >
              {t('withdrawSelected', { count: formatCount(language, selected.size) })}
            </button>
          )
        }
        columns={[
          {
            label: t('withdrawPick'),
            className: 'pick',
            cell: (u: FileUploadView) =>
              u.canWithdraw && (
                <input
                  type="checkbox"
                  aria-label={t('withdrawPickUpload', {
                    user: u.uploader.username,
                    time: formatTime(language, u.uploadedAt),
                  })}
                  checked={selected.has(u.uploadId)}
                  onChange={(e) => toggle(u.uploadId, (e.target as HTMLInputElement).checked)}
                />
              ),
          },
          { label: t('trashUploader'), className: 'who', cell: (u) => u.uploader.username },
          ...(admin
            ? [{ label: t('trashUnit'), className: 'unit', cell: (u: FileUploadView) => unitPlace(u.unit) }]
            : []),
          { label: t('trashUploadedAt'), className: 'when', cell: (u) => formatTime(language, u.uploadedAt, true) },
          { label: t('colFileName'), className: 'name', cell: (u) => u.fileName },
          { label: t('colSize'), numeric: true, cell: (u) => formatBytes(u.size) },
          { label: t('fileUploadState'), cell: state },
          {
            label: t('trashAction'),
            className: 'action',
            cell: (u) =>
              u.canWithdraw ? (
                <button
                  type="button"
                  class="secondary small"
                  aria-label={t('withdrawUpload', {
                    user: u.uploader.username,
                    time: formatTime(language, u.uploadedAt),
                  })}
                  onClick={() => setWithdrawing({ uploads: [u.uploadId], what: u.fileName })}
                >
                  {t('withdraw')}
                </button>
              ) : (
                u.withdrawal && <a href="#/trash">{t('navTrash')}</a>
              ),
          },
        ]}
        rowKey={(u) => u.uploadId}
        rowAttributes={(u) => ({ 'data-withdrawn': u.withdrawal ? 'yes' : 'no' })}
        tableClass="files file-uploads"
        pager={(total) => (
          <Pager language={language} total={total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
        )}
      />
      {withdrawing && (
        <WithdrawDialog
          language={language}
          what={withdrawing.what}
          count={withdrawing.uploads.length}
          trashDays={trashDays}
          onWithdraw={(reason, note) => withdraw(withdrawing.uploads, reason, note)}
          onClose={() => setWithdrawing(null)}
        />
      )}
    </main>
  );
}
