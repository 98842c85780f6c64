import type { ComponentChildren } from 'preact';
import type { FileTextHit, TextSnippet } from '../../../shared/schemas.js';
import type { ArchiveApi } from '../api.js';
import { describeError, translator, type Language } from '../i18n/index.js';
import { go, pageHash, withParams } from '../route.js';
import { ErrorNote } from './controls.js';
import { downloadUrl } from './file-preview.js';
import { formatBytes } from './format.js';
import { useLoaded } from './table/use-loaded.js';

const PAGE = 20;

/**
 * 按内容搜索: the caller's files (its unit's, its reach's) whose text, extracted or recognised in
 * a scan, holds every word typed; each with a snippet where the words are marked. The words and
 * the page are kept in the address (`text`, `offset`).
 */
export function TextSearchView({
  api,
  language,
  params,
}: {
  api: ArchiveApi;
  language: Language;
  params: URLSearchParams;
}) {
  const t = translator(language);
  const words = params.get('text')?.trim() ?? '';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const key = words ? new URLSearchParams({ q: words, limit: String(PAGE), offset: String(offset) }).toString() : null;
  const { data, error, loading } = useLoaded(key, (query) => api.searchTexts(new URLSearchParams(query)));
  const show = (next: Record<string, string | number | null>) => go(pageHash('files', withParams(params, next)));

  return (
    <section class="text-search" aria-labelledby="text-search-title">
      <h2 id="text-search-title" class="visually-hidden">
        {t('textSearchTitle')}
      </h2>
      <form
        role="search"
        class="text-search-form"
        onSubmit={(event) => {
          event.preventDefault();
          const value = new FormData(event.currentTarget).get('text');
          show({ text: typeof value === 'string' && value.trim() ? value.trim() : null, offset: null });
        }}
      >
        <label>
          {t('textSearchLabel')}
          <input type="search" name="text" maxLength={200} defaultValue={words} key={words} />
        </label>
        <button type="submit">{t('searchButton')}</button>
        <p class="hint">{t('textSearchHint')}</p>
      </form>
      <ErrorNote error={error ? describeError(language, error) : null} />
      {words && loading && <p aria-live="polite">{t('textSearchLoading')}</p>}
      {data && data.items.length === 0 && (
        <p aria-live="polite">{data.terms.length === 0 ? t('textSearchNoWords') : t('textSearchNone')}</p>
      )}
      {data && data.items.length > 0 && (
        <>
          <ol class="text-hits" start={offset + 1} aria-live="polite">
            {data.items.map((hit) => (
              <TextHit key={hit.fileId} hit={hit} language={language} />
            ))}
          </ol>
          {(offset > 0 || data.more) && (
            <nav class="pager" aria-label={t('textSearchPages')}>
              <button
                type="button"
                class="secondary"
                disabled={offset === 0}
                onClick={() => show({ offset: Math.max(0, offset - PAGE) || null })}
              >
                {t('textSearchPrevious')}
              </button>{' '}
              <button
                type="button"
                class="secondary"
                disabled={!data.more}
                onClick={() => show({ offset: offset + PAGE })}
              >
                {t('textSearchNext')}
              </button>
            </nav>
          )}
        </>
      )}
    </section>
  );
}

function TextHit({ hit, language }: { hit: FileTextHit; language: Language }) {
  const t = translator(language);
  return (
    <li class="text-hit">
      <div class="text-hit-name">
        <span class="file-name">{hit.fileName}</span> <span class="size">{formatBytes(hit.fileLength)}</span>{' '}
        <a
          href={downloadUrl(hit.fileId)}
          download={hit.fileName.split('/').pop()}
          aria-label={`${t('download')} ${hit.fileName}`}
        >
          {t('download')}
        </a>
      </div>
      <p class="snippet">
        <Marked snippet={hit.snippet} />
      </p>
    </li>
  );
}

/** The snippet's text with its marked words in <mark> (as text nodes: nothing in a file's text is read as markup). */
export function Marked({ snippet }: { snippet: TextSnippet }) {
  const parts: ComponentChildren[] = [];
  let at = 0;
  for (const [start, end] of snippet.marks) {
    if (start < at || end > snippet.text.length) continue;
    parts.push(snippet.text.slice(at, start), <mark key={start}>{snippet.text.slice(start, end)}</mark>);
    at = end;
  }
  parts.push(snippet.text.slice(at));
  return <>{parts}</>;
}
