import { useState } from 'preact/hooks';
import { translator, type Language, type MessageKey } from '../../i18n/index.js';
import type { UploadItem } from '../../upload/folder-upload.js';
import { formatBytes, formatCount, formatTime } from '../format.js';
import { VirtualList } from '../virtual-list.js';
import { withdrawable, type DropWithdrawal } from './drop-withdrawal.js';
import { FILTERS, rowStatus, statusText, transferRows, type Counts, type Filter, type Row } from './transfer-rows.js';

const ROW_HEIGHT = 34;
const FILTER_LABEL: Record<Filter, MessageKey> = {
  all: 'filterAll',
  instant: 'filterInstant',
  stored: 'filterStored',
  failed: 'filterFailed',
  skipped: 'filterSkipped',
  unfinished: 'filterUnfinished',
};

/** Picking and withdrawing files of an ended drop (absent while it runs, or before its receipt is kept). */
export interface RowWithdrawal {
  withdrawal: DropWithdrawal;
  selected: ReadonlySet<string>;
  onPick: (uploadId: string, on: boolean) => void;
  onWithdraw: (uploadId: string, path: string) => void;
}

/**
 * The files of the list by folder, filtered by outcome; a folder's heading folds it away. Once the
 * drop ended and its receipt is kept, a counted file has a box to pick it and its own 撤回; a
 * withdrawn one says 已撤回 and links to 回收站.
 */
export function TransferList({
  language,
  items,
  counts,
  stalled,
  withdrawal,
}: {
  language: Language;
  items: readonly UploadItem[];
  counts: Counts;
  /** Requests wait to be retried: files that need the archive wait with them. */
  stalled: boolean;
  withdrawal?: RowWithdrawal | undefined;
}) {
  const t = translator(language);
  const [filter, setFilter] = useState<Filter>('all');
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(() => new Set());
  const rows = transferRows(items, filter, collapsed);
  const toggle = (folder: string) => {
    const next = new Set(collapsed);
    if (next.has(folder)) next.delete(folder);
    else next.add(folder);
    setCollapsed(next);
  };
  return (
    <>
      <div class="filters" role="group" aria-label={t('resultsTitle')}>
        {/* 跳过 only once something was skipped: most uploads never ask. */}
        {FILTERS.filter((f) => f !== 'skipped' || counts.skipped > 0).map((f) => (
          <button type="button" aria-pressed={filter === f} onClick={() => setFilter(f)}>
            {t(FILTER_LABEL[f])}
            {f !== 'all' && ` (${formatCount(language, counts[f])})`}
          </button>
        ))}
      </div>
      <VirtualList
        key={filter}
        class={withdrawal ? 'outcomes picking' : 'outcomes'}
        label={t('resultsTitle')}
        count={rows.length}
        rowHeight={ROW_HEIGHT}
        maxHeight={ROW_HEIGHT * 14}
        row={(index) => {
          const row = rows[index]!;
          return (
            <TransferRow
              key={row.kind === 'folder' ? `folder:${row.folder}` : row.item.path}
              language={language}
              row={row}
              collapsed={collapsed}
              onToggle={toggle}
              stalled={stalled}
              withdrawal={withdrawal}
            />
          );
        }}
      />
    </>
  );
}

function TransferRow({
  language,
  row,
  collapsed,
  onToggle,
  stalled,
  withdrawal,
}: {
  language: Language;
  row: Row;
  collapsed: ReadonlySet<string>;
  onToggle: (folder: string) => void;
  stalled: boolean;
  withdrawal: RowWithdrawal | undefined;
}) {
  const t = translator(language);
  if (row.kind === 'folder')
    return (
      <li class="folder" data-folder={row.folder}>
        <button
          type="button"
          class="link"
          aria-expanded={!collapsed.has(row.folder)}
          onClick={() => onToggle(row.folder)}
        >
          {row.folder || t('looseFiles')}
        </button>
        <span class="count">
          {formatCount(language, row.finished)} / {formatCount(language, row.total)}
          {row.failed > 0 && ` · ${t('folderFailed', { count: formatCount(language, row.failed) })}`}
        </span>
      </li>
    );
  const { item } = row;
  const name = item.folder ? item.path.slice(item.folder.length + 1) : item.path;
  const kept = withdrawal?.withdrawal.rowOf(item);
  const status = kept?.withdrawal
    ? t('withdrawnAt', { time: formatTime(language, kept.withdrawal.withdrawnAt) })
    : statusText(language, item, stalled);
  return (
    <li
      data-name={item.path}
      data-status={rowStatus(item, stalled)}
      data-withdrawn={kept?.withdrawal ? 'yes' : undefined}
      title={item.path}
    >
      {withdrawal && (
        <span class="pick">
          {withdrawable(kept) && (
            <input
              type="checkbox"
              aria-label={t('withdrawPickRow', { name: item.path })}
              checked={withdrawal.selected.has(kept.uploadId)}
              onChange={(e) => withdrawal.onPick(kept.uploadId, (e.target as HTMLInputElement).checked)}
            />
          )}
        </span>
      )}
      <span class="name">{name}</span>
      <span class="size">{formatBytes(item.size)}</span>
      <span class="status" title={status}>
        {status}
      </span>
      {withdrawal && (
        <span class="action">
          {withdrawable(kept) ? (
            <button
              type="button"
              class="secondary small"
              aria-label={`${t('withdraw')} ${item.path}`}
              onClick={() => withdrawal.onWithdraw(kept.uploadId, item.path)}
            >
              {t('withdraw')}
            </button>
          ) : (
            kept?.withdrawal && <a href="#/trash">{t('navTrash')}</a>
          )}
        </span>
      )}
    </li>
  );
}
