import { useEffect, useRef, useState } from 'preact/hooks';
import { useModal } from './modal.js';
import type { PDFDocumentProxy } from 'unpdf/pdfjs';
import { previewOf } from '../../../shared/file-types.js';
import { translator, type Language } from '../i18n/index.js';

/** A file to show: its id, and the name and media type it is listed under. */
export interface PreviewFile {
  fileId: string;
  fileName: string;
  contentType: string;
}

export const downloadUrl = (fileId: string) => `/api/files/${fileId}`;
const inlineUrl = (fileId: string) => `/api/files/${fileId}?disposition=inline`;

/** Whether the browser can show the file (a PDF, an image other than SVG): the server decides the same way. */
export const canPreview = (file: PreviewFile) => previewOf(file.contentType, file.fileName) !== undefined;

/**
 * The in-page viewer, a modal `<dialog>` (Esc closes it, focus returns to the page): an image as
 * the browser shows it, a PDF drawn page by page with pdf.js (the one the server extracts text
 * with, loaded only when a PDF is first shown), never run as a document of this site.
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
  const kind = previewOf(file.contentType, file.fileName)?.kind;
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
        {kind === 'pdf' && <PdfPages language={language} file={file} />}
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

/** A PDF, one page at a time, drawn on a canvas by pdf.js in this page (no plugin, no frame). */
function PdfPages({ language, file }: { language: Language; file: PreviewFile }) {
  const t = translator(language);
  const canvas = useRef<HTMLCanvasElement>(null);
  const [pdf, setPdf] = useState<PDFDocumentProxy | null>(null);
  const [page, setPage] = useState(1);
  const [failed, setFailed] = useState(false);
  const [drawn, setDrawn] = useState(0);

  useEffect(() => {
    let current = true;
    let opened: PDFDocumentProxy | undefined;
    const open = async () => {
      const [{ getDocument }, response] = await Promise.all([import('unpdf/pdfjs'), fetch(inlineUrl(file.fileId))]);
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const data = new Uint8Array(await response.arrayBuffer());
      // No eval (the app's CSP refuses it), no scripts or forms of the document.
      opened = await getDocument({ data, isEvalSupported: false, enableXfa: false }).promise;
      if (current) setPdf(opened);
    };
    open().catch(() => current && setFailed(true));
    return () => {
      current = false;
      void opened?.destroy();
    };
  }, [file.fileId]);

  useEffect(() => {
    if (!pdf || !canvas.current) return;
    const target = canvas.current;
    let task: { cancel(): void; promise: Promise<void> } | undefined;
    let current = true;
    const draw = async () => {
      const shown = await pdf.getPage(page);
      // As big as the dialog allows (the whole page in view), sharp on high-density screens.
      const natural = shown.getViewport({ scale: 1 });
      const fit = Math.min(
        (target.parentElement?.clientWidth ?? 800) / natural.width,
        (window.innerHeight * 0.72) / natural.height,
      );
      const viewport = shown.getViewport({ scale: fit * (window.devicePixelRatio || 1) });
      target.width = Math.floor(viewport.width);
      target.height = Math.floor(viewport.height);
      target.style.width = `${Math.floor(viewport.width / (window.devicePixelRatio || 1))}px`;
      if (!current) return;
      task = shown.render({ canvas: target, viewport });
      await task.promise;
      if (current) setDrawn(page);
    };
    draw().catch((e: unknown) => {
      if (current && (e as { name?: string }).name !== 'RenderingCancelledException') setFailed(true);
    });
    return () => {
      current = false;
      task?.cancel();
    };
  }, [pdf, page]);

  if (failed) return <p role="alert">{t('previewFailed')}</p>;
  const pages = pdf?.numPages ?? 0;
  return (
    <div class="pdf-pages" data-page={drawn || undefined} aria-busy={drawn !== page ? 'true' : undefined}>
      {!pdf && <p>{t('loading')}</p>}
      <canvas ref={canvas} aria-label={pdf ? t('previewPage', { page, pages }) : undefined} />
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
