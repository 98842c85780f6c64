import { useEffect, useMemo, useState } from 'preact/hooks';
import type { AccountView } from '../../../../shared/schemas.js';
import type { ArchiveApi } from '../../api.js';
import { Hasher } from '../../hashing/hasher.js';
import { startHashWorker } from '../../hashing/hash-workers.js';
import type { ChosenFile } from '../../upload/chosen-files.js';
import { FolderUpload } from '../../upload/folder-upload.js';
import { IndexedDbJournal } from '../../upload/indexeddb-journal.js';
import { tusSender } from '../../upload/large-upload.js';
import { ProgressAnnouncer } from '../../upload/progress-announcement.js';
import { ResumeIndex } from '../../upload/resume-index.js';
import { RateMeter } from '../../upload/transfer-rate.js';
import { MemoryJournal, type UploadJournal } from '../../upload/upload-journal.js';

/** The list re-renders at most this often, whatever the number of files. */
const RENDER_INTERVAL_MS = 250;
/** Hashing workers: one per core, up to four (each also runs an MD5 worker for large files). */
const HASH_WORKERS = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 2));

function journalFor(accountId: string): UploadJournal {
  return typeof indexedDB === 'undefined' ? new MemoryJournal() : new IndexedDbJournal(accountId);
}

/**
 * The account's folder upload, for as long as the page is mounted: restored from its journal,
 * written down when the page is left, redrawn at most every RENDER_INTERVAL_MS while files move.
 */
export function useFolderUpload({
  api,
  account,
  maxFileSize,
}: {
  api: ArchiveApi;
  account: AccountView;
  maxFileSize: number;
}) {
  const [, setVersion] = useState(0);
  const [restoredUnfinished, setRestoredUnfinished] = useState(0);

  const upload = useMemo(() => {
    const hasher = new Hasher(HASH_WORKERS, startHashWorker);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const instance = new FolderUpload({
      api,
      hasher,
      // Per account: another clerk on this browser never sees or continues these files.
      journal: journalFor(account.id),
      sendLarge: tusSender(() => api.csrfToken, new ResumeIndex(account.id)),
      maxFileSize,
      saveReceipt: (id, receipt) => api.putReceipt(id, receipt),
      onChange: () => {
        timer ??= setTimeout(() => {
          timer = undefined;
          setVersion((v) => v + 1);
        }, RENDER_INTERVAL_MS);
      },
    });
    return Object.assign(instance, {
      dispose: () => {
        clearTimeout(timer);
        hasher.dispose();
      },
    });
  }, [account.id]);

  const announcer = useMemo(() => new ProgressAnnouncer(), [upload]);
  const meter = useMemo(() => new RateMeter(), [upload]);

  useEffect(() => {
    void upload.restore().then(() => setRestoredUnfinished(upload.items.filter((i) => !i.outcome).length));
    const leave = () => void upload.flush();
    addEventListener('pagehide', leave);
    return () => {
      removeEventListener('pagehide', leave);
      void upload.flush();
      upload.pause();
      upload.dispose();
    };
  }, [upload]);

  const add = (files: ChosenFile[]) => {
    if (files.length === 0) return;
    setRestoredUnfinished(0);
    // Files dropped while a list is under way, or has files not finished (after a reload), join it
    // (the same folder continues); after a list that ended, failures included, a new one starts
    // (the ended one stays as its receipt).
    const ended = !upload.active && upload.items.length > 0 && upload.items.every((i) => i.outcome);
    // Asked for once the ended list is gone, so its summary is not taken for the new one's.
    const start = () => {
      announcer.began();
      return upload.add(files);
    };
    if (ended) void upload.clear().then(start);
    else void start();
  };

  return {
    upload,
    announcer,
    meter,
    /** Files a reload found not finished (0 once the clerk adds files or clears the list). */
    restoredUnfinished,
    add,
    retryFailed: () => {
      announcer.began();
      upload.retryFailed();
    },
    clear: () => void upload.clear().then(() => setRestoredUnfinished(0)),
  };
}
