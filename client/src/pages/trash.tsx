import { useState } from 'preact/hooks';
import type { PurgeAnswer, TrashItem } from '../../../shared/withdrawals.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { ConfirmAction, ErrorNote, Pager } from './controls.js';
import { formatBytes, formatCount, formatTime, unitPlace } from './format.js';
import { TableSection } from './table/table-section.js';
import { useLoaded } from './table/use-loaded.js';
import { REASON_KEYS } from './withdraw-dialog.js';

const PAGE_SIZE = 50;

/**
 * 回收站: the withdrawn uploads of the clerk's unit (an administrator's: of their reach), with the
 * days each has left; 恢复 where the caller may (its uploader, or an administrator), after a
 * confirmation that says the counts come back. Administrators also 彻底删除 one, or 清空回收站,
 * after a confirmation that says it cannot be undone.
 */
export function TrashPage({
  api,
  language,
  admin,
  trashDays,
}: {
  api: ArchiveApi;
  language: Language;
  admin: boolean;
  /** TRASH_DAYS, from the session. */
  trashDays: number;
}) {
  const t = translator(language);
  const [offset, setOffset] = useState(0);
  // Bumped after a restore, so the list is read again.
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const loaded = useLoaded(`${offset}:${version}`, () => api.trash({ limit: PAGE_SIZE, offset }));
  const restore = (item: TrashItem) => {
    setError(null);
    setDone(null);
    api.restoreWithdrawal(item.id).then(
      () => {
        setDone(t('trashRestored', { name: item.fileName }));
        setVersion(version + 1);
      },
      (e: unknown) => setError(describeError(language, e)),
    );
  };
  const purged = (answer: PurgeAnswer) => {
    const skipped = answer.skipped.length > 0 ? ` ${t('trashPurgeSkipped', { count: answer.skipped.length })}` : '';
    setDone(t('trashPurged', { count: answer.purged.length, contents: answer.contentsDeleted }) + skipped);
    setVersion(version + 1);
  };
  const purge = (ids: string[] | 'all') => {
    setError(null);
    setDone(null);
    (ids === 'all' ? api.emptyTrash() : api.purgeWithdrawals(ids)).then(purged, (e: unknown) =>
      setError(describeError(language, e)),
    );
  };
  const reason = (item: TrashItem) =>
    item.reason === 'other' && item.note ? `${t(REASON_KEYS.other)}：${item.note}` : t(REASON_KEYS[item.reason]);
  return (
    <main class="page" aria-labelledby="trash-title">
      <h1 id="trash-title">{t('trashTitle')}</h1>
      <p class="hint">{t('trashHint', { days: trashDays })}</p>
      {admin && (
        <p class="actions">
          <ConfirmAction
            language={language}
            label={t('emptyTrash')}
            on={t('trashTitle')}
            question={t('emptyTrashQuestion')}
            confirm={t('emptyTrashConfirm')}
            onConfirm={() => purge('all')}
          />
        </p>
      )}
      <ErrorNote error={error} />
      {done && (
        <p role="status" class="notice">
          {done}
        </p>
      )}
      <TableSection
        language={language}
        label={t('trashTitle')}
        loaded={loaded}
        empty={t('trashEmpty')}
        columns={[
          { label: t('colFileName'), className: 'name', cell: (item: TrashItem) => item.fileName },
          { label: t('colSize'), numeric: true, cell: (item) => formatBytes(item.size) },
          ...(admin ? [{ label: t('trashUnit'), cell: (item: TrashItem) => unitPlace(item.unit) }] : []),
          { label: t('trashUploader'), className: 'who', cell: (item) => item.uploader.username },
          { label: t('trashUploadedAt'), className: 'when', cell: (item) => formatTime(language, item.uploadedAt) },
          {
            label: t('trashWithdrawn'),
            cell: (item) =>
              t('trashWithdrawnBy', {
                user: item.withdrawnBy.username,
                time: formatTime(language, item.withdrawnAt),
                reason: reason(item),
              }),
          },
          {
            label: t('trashDaysLeft'),
            className: 'days-left',
            cell: (item) =>
              item.expired ? (
                <strong>{t('trashExpired')}</strong>
              ) : (
                t('trashDays', { days: formatCount(language, item.daysLeft) })
              ),
          },
          {
            label: t('trashAction'),
            className: 'action',
            cell: (item) => (
              <>
                {item.canRestore ? (
                  <ConfirmAction
                    language={language}
                    label={t('restore')}
                    on={item.fileName}
                    question={t('restoreQuestion')}
                    confirm={t('restoreConfirm')}
                    onConfirm={() => restore(item)}
                  />
                ) : (
                  <span class="hint">{t('restoreNotYours')}</span>
                )}
                {admin && (
                  <ConfirmAction
                    language={language}
                    label={t('purge')}
                    on={item.fileName}
                    question={t('purgeQuestion')}
                    confirm={t('purgeConfirm')}
                    onConfirm={() => purge([item.id])}
                  />
                )}
              </>
            ),
          },
        ]}
        rowKey={(item) => item.id}
        rowAttributes={(item) => ({ 'data-expired': item.expired ? 'yes' : 'no' })}
        tableClass="files trash"
        pager={(total) => (
          <Pager language={language} total={total} size={PAGE_SIZE} offset={offset} onOffset={setOffset} />
        )}
      />
    </main>
  );
}
