import { useEffect, useState } from 'preact/hooks';
import type { KeptImportView } from '../../../../shared/accounts.js';
import { keptImportUrl, type ArchiveApi } from '../../api.js';
import { translator, type Language } from '../../i18n/index.js';
import { formatTime } from '../format.js';

/**
 * The caller's imports whose passwords the server keeps (a reload or a dropped connection lost the
 * answer), read again whenever `refresh` changes; `taken` drops one that was downloaded.
 */
export function useKeptImports(api: ArchiveApi, refresh: number) {
  const [kept, setKept] = useState<KeptImportView[]>([]);
  useEffect(() => {
    api.keptImports().then(
      (r) => setKept(r.items),
      () => {},
    );
  }, [refresh]);
  return { kept, taken: (id: string) => setKept((items) => items.filter((k) => k.id !== id)) };
}

/**
 * The caller's imports whose one-time passwords the server still keeps, each a download served
 * once (a plain link: the session cookie goes along); nothing when there are none.
 */
export function KeptImports({
  language,
  items,
  onTaken,
}: {
  language: Language;
  items: KeptImportView[];
  onTaken: (id: string) => void;
}) {
  const t = translator(language);
  if (items.length === 0) return null;
  return (
    <section class="card handover" role="status" aria-labelledby="kept-imports-title">
      <h2 id="kept-imports-title">{t('keptImportsTitle', { count: items.length })}</h2>
      <p class="hint">{t('keptImportsHint')}</p>
      <ul>
        {items.map((k) => (
          <li key={k.id}>
            {t('keptImport', { count: k.count, time: formatTime(language, k.createdAt) })}{' '}
            <a href={keptImportUrl(k.id)} download={t('importResultName')} onClick={() => onTaken(k.id)}>
              {t('keptImportDownload')}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
