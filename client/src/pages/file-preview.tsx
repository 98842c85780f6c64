import { useEffect, useRef, useState } from 'preact/hooks';
import { useModal } from './modal.js';
import { previewOf, shownAsPages } from '../../../shared/file-types.js';
import { translator, type Language } from '../i18n/index.js';

/** A file to show: its id, and the name and media type it is listed under. */
export interface PreviewFile {
  fileId: string;
  fileName: string;
  contentType: string;
}

export const downloadUrl = (fileId: string) => `/api/files/${fileId}`;
const inlineUrl = (fileId: string) => `/api/files/${fileId}?disposition=inline`;

/** Whether the viewer can show the file (a PDF, a TIFF, an image other than SVG): the server decides the same way. */
export const canPreview = (file: PreviewFile) =>
  shownAsPages(file.contentType, file.fileName) || previewOf(file.contentType, file.fileName) !== undefined;

/**
 * The in-page viewer, a modal `<dialog>` (Esc closes it, focus returns to the page): an image as
 * the browser shows it, a PDF or a TIFF page by page as the server draws them, never run as a
 * document of this site.
 */
export function FilePreview({
  language,
  file,
  onClose,
}: {
  language: Language;
  file: PreviewFile;
  onClose: () => void;
}) {
  const t = translator(language);
  const dialog = useModal();
  const kind = shownAsPages(file.contentType, file.fileName)
    ? 'pages'
    : previewOf(file.contentType, file.fileName)?.kind;
  return (
    <dialog ref={dialog} class="preview" aria-labelledby="preview-title" onClose={onClose}>
      <header>
        <h2 id="preview-title">{file.fileName}</h2>
        <a href={downloadUrl(file.fileId)} download={file.fileName.split('/').pop()}>
          {t('download')}
        </a>
        {kind === 'image' && (
          <a href={inlineUrl(file.fileId)} target="_blank" rel="noopener noreferrer">
            {t('openInNewTab')}
          </a>
        )}
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
          {t('close')}
        </button>
      </header>
      <div class="preview-body">
        {kind === 'image' && <ImagePreview language={language} file={file} />}
        {kind === 'pages' && <DrawnPages language={language} file={file} />}
        {kind === undefined && <p role="alert">{t('previewFailed')}</p>}
      </div>
    </dialog>
  );
}

/**
 * An image as the browser draws it; one it cannot draw (a TIFF or HEIC sent as image/*, a damaged
 * file) says so instead of showing a broken image.
 */
function ImagePreview({ language, file }: { language: Language; file: PreviewFile }) {
  const t = translator(language);
  const [failed, setFailed] = useState(false);
  if (failed) return <p role="alert">{t('previewFailed')}</p>;
  return (
    <img src={inlineUrl(file.fileId)} alt={t('previewOf', { name: file.fileName })} onError={() => setFailed(true)} />
  );
}

/** Page `page` of a file as the server draws it, `width` pixels wide. */
export const pageUrl = (fileId: string, page: number, width: number) =>
  `/api/files/${fileId}/pages/${page}?width=${width}`;

/**
 * The width to ask a page at: as wide as the dialog on this screen (sharper on high-density ones),
 * rounded up to a step of 200 pixels so pages seen before come from the browser's cache.
 */
function pageWidth(box: HTMLElement | null): number {
  // Before the dialog is laid out the box is 0 wide: the window says how big it will be.
  const css = Math.min(box?.clientWidth || window.innerWidth * 0.8, (window.innerHeight * 0.72) / 1.414);
  return Math.min(1600, Math.max(200, Math.ceil((css * (window.devicePixelRatio || 1)) / 200) * 200));
}

/**
 * A PDF or a TIFF scan, one page at a time, as the server draws it (a JPEG): every browser the
 * offices use shows it, Chromium 86 and 109 included, and no document code runs in the page.
 */
function DrawnPages({ language, file }: { language: Language; file: PreviewFile }) {
  const t = translator(language);
  const box = useRef<HTMLDivElement>(null);
  const [page, setPage] = useState(1);
  const [pages, setPages] = useState(0);
  const [shown, setShown] = useState<{ page: number; url: string } | null>(null);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    let current = true;
    let url: string | undefined;
    const load = async () => {
      const response = await fetch(pageUrl(file.fileId, page, pageWidth(box.current)));
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const count = Number(response.headers.get('X-Page-Count'));
      url = URL.createObjectURL(await response.blob());
      if (!current) return URL.revokeObjectURL(url);
      if (count > 0) setPages(count);
      setShown({ page, url });
    };
    load().catch(() => current && setFailed(true));
    return () => {
      current = false;
    };
  }, [file.fileId, page]);
  // The page shown before is let go once the next one is there (or the viewer closes).
  useEffect(() => () => shown && URL.revokeObjectURL(shown.url), [shown]);

  if (failed) return <p role="alert">{t('previewFailed')}</p>;
  return (
    <div ref={box} class="pdf-pages" data-page={shown?.page} aria-busy={shown?.page !== page ? 'true' : undefined}>
      {!shown && <p>{t('loading')}</p>}
      {shown && <img src={shown.url} alt={t('previewPage', { page: shown.page, pages: pages || 1 })} />}
      {pages > 1 && (
        <nav class="pager" aria-label={t('pagination')}>
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            {t('previousPage')}
          </button>
          <span aria-live="polite">{t('previewPage', { page, pages })}</span>
          <button type="button" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            {t('nextPage')}
          </button>
        </nav>
      )}
    </div>
  );
}
