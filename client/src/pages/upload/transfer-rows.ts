import { translator, type Language } from '../../i18n/index.js';
import { byCodePoints, type UploadItem } from '../../upload/folder-upload.js';
import { reasonText } from '../../upload/outcome-text.js';
import { formatBytes, formatTime } from '../format.js';

/** The list's filters: everything, or one kind of outcome. */
export type Filter = 'all' | 'instant' | 'stored' | 'failed' | 'skipped' | 'unfinished';
export const FILTERS: readonly Filter[] = ['all', 'instant', 'stored', 'failed', 'skipped', 'unfinished'];

/** A row of the transfer list: a folder's heading (with its tally) or one file. */
export type Row =
  | { kind: 'folder'; folder: string; total: number; finished: number; failed: number }
  | { kind: 'file'; item: UploadItem };

/** How many files of the list stand where. */
export type Counts = Record<Exclude<Filter, 'all'>, number>;

export function kindOf(item: UploadItem): Exclude<Filter, 'all'> {
  if (item.outcome?.kind === 'failed') return 'failed';
  if (item.outcome?.kind === 'instant') return 'instant';
  if (item.outcome?.kind === 'skipped') return 'skipped';
  if (item.outcome) return 'stored';
  return 'unfinished';
}

/** Finished (in any way) first? No: failures first, then what is moving, then the rest in path order. */
function rank(item: UploadItem): number {
  if (item.phase === 'failed') return 0;
  if (!item.outcome && item.phase !== 'waiting') return 1;
  return 2;
}

export function countItems(items: readonly UploadItem[]): Counts {
  const counts = { instant: 0, stored: 0, failed: 0, skipped: 0, unfinished: 0 };
  for (const item of items) counts[kindOf(item)]++;
  return counts;
}

/**
 * The rows shown: files grouped by folder (folders in code-point order, a heading each unless the
 * list is one unnamed folder), those of `filter` only, none under a collapsed folder.
 */
export function transferRows(items: readonly UploadItem[], filter: Filter, collapsed: ReadonlySet<string>): Row[] {
  const folders = new Map<string, { total: number; finished: number; failed: number; items: UploadItem[] }>();
  for (const item of items) {
    let folder = folders.get(item.folder);
    if (!folder) folders.set(item.folder, (folder = { total: 0, finished: 0, failed: 0, items: [] }));
    folder.total++;
    if (item.outcome) folder.finished++;
    if (item.outcome?.kind === 'failed') folder.failed++;
    if (filter === 'all' || kindOf(item) === filter) folder.items.push(item);
  }
  const rows: Row[] = [];
  const byFolder = [...folders].sort(([a], [b]) => byCodePoints(a, b));
  for (const [folder, group] of byFolder) {
    if (group.items.length === 0) continue;
    if (byFolder.length > 1 || folder !== '') rows.push({ kind: 'folder', folder, ...group });
    if (collapsed.has(folder)) continue;
    group.items.sort((a, b) => rank(a) - rank(b) || byCodePoints(a.path, b.path));
    for (const item of group.items) rows.push({ kind: 'file', item });
  }
  return rows;
}

function failureText(language: Language, item: UploadItem): string {
  return item.outcome?.kind === 'failed' ? reasonText(language, item.outcome.code, item.outcome.message) : '';
}

/** A path as the clerk knows it inside the folder they dropped ("案卷007/第0033页.jpg"). */
export function pathInDrop(path: string): string {
  const slash = path.indexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

/** Phases that need the archive's answer to move on. */
const ASKING: ReadonlySet<string> = new Set(['checking', 'proving', 'sending']);

/**
 * Whether a file waits to be tried again: its own request failed, or (`stalled`: requests of the
 * list wait to be retried) it queues behind those requests for the archive.
 */
function retrying(item: UploadItem, stalled: boolean): boolean {
  return !item.outcome && (item.retrying === true || (stalled && ASKING.has(item.phase)));
}

/** The row's `data-status`: how it ended, or its phase (`retrying` while it waits to be tried again). */
export function rowStatus(item: UploadItem, stalled = false): string {
  if (item.outcome) return item.outcome.kind;
  return retrying(item, stalled) ? 'retrying' : item.phase;
}

/** Where one file stands, in words (with its percentage while it is hashed or sent). */
export function statusText(language: Language, item: UploadItem, stalled = false): string {
  const t = translator(language);
  const outcome = item.outcome;
  // A copy of a page of this very list: counted, but it is not a repeated upload to tell the clerk about.
  if (item.sameAs && (outcome?.kind === 'instant' || outcome?.kind === 'duplicate'))
    return t('statusSameAs', { path: pathInDrop(item.sameAs) });
  if (outcome) {
    switch (outcome.kind) {
      case 'instant':
        return t('statusInstant', { count: outcome.uploadCount });
      case 'stored':
        return t('statusStored');
      case 'duplicate':
        return t('statusDuplicate', { count: outcome.uploadCount });
      case 'failed':
        return t('statusFailed', { reason: failureText(language, item) });
      case 'skipped':
        return t('statusSkipped', { time: formatTime(language, outcome.lastUploadTime) });
    }
  }
  if (retrying(item, stalled)) return t('statusRetrying');
  const percent = item.size > 0 ? ` ${Math.floor((100 * item.progress) / item.size)}%` : '';
  switch (item.phase) {
    case 'hashing':
      return item.progress > 0 ? `${t('hashing')}${percent}` : t('hashing');
    case 'twin':
      return t('waitingForTwin');
    case 'checking':
      return t('checking');
    case 'asking':
      return t('statusAsking');
    case 'proving':
      return t('proving');
    case 'sending':
      // Bytes as well as the share: a large file's row moves visibly, a megabyte at a time.
      return item.progress > 0
        ? t('sendingBytes', {
            sent: formatBytes(item.progress),
            size: formatBytes(item.size),
            percent: Math.floor((100 * item.progress) / item.size),
          })
        : t('sending');
    default:
      return item.file ? t('waiting') : t('needsFile');
  }
}
