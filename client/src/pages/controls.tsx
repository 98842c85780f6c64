import { render, type ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { translator, type Language } from '../i18n/index.js';

/** A problem to show where it happened (nothing when there is none). */
export function ErrorNote({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

/** A small secondary button for a row's action, named for screen readers with what it acts on. */
export function RowAction({ label, on, onClick }: { label: string; on: string; onClick: () => void }) {
  return (
    <button type="button" class="secondary small" onClick={onClick} aria-label={on ? `${label} ${on}` : undefined}>
      {label}
    </button>
  );
}

/**
 * An action that asks first, in place: the button becomes the question with a confirming and a
 * cancelling button (no modal dialog to lose focus in).
 */
export function ConfirmAction({
  language,
  label,
  on,
  question,
  confirm,
  onConfirm,
}: {
  language: Language;
  label: string;
  on: string;
  question: string;
  confirm: string;
  onConfirm: () => void;
}) {
  const t = translator(language);
  const [asking, setAsking] = useState(false);
  if (!asking) return <RowAction label={label} on={on} onClick={() => setAsking(true)} />;
  return (
    <span class="confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        class="danger small"
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        {confirm}
      </button>
      <button type="button" class="secondary small" onClick={() => setAsking(false)}>
        {t('cancel')}
      </button>
    </span>
  );
}

/** Copies a secret (a one-time password, a token) to the clipboard, saying when it did. */
export function CopyButton({ language, text }: { language: Language; text: string }) {
  const t = translator(language);
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a refused permission): the text stays there to select.
      setCopied(false);
    }
  };
  return (
    <button type="button" class="secondary small" onClick={() => void copy()}>
      {copied ? t('copied') : t('copy')}
    </button>
  );
}

/** Previous and next page of a list of `total` items shown `size` at a time from `offset`. */
export function Pager({
  language,
  total,
  size,
  offset,
  onOffset,
  more = false,
}: {
  language: Language;
  total: number;
  size: number;
  offset: number;
  onOffset: (offset: number) => void;
  /** The total was counted only so far: there are more rows than it (the next page stays open). */
  more?: boolean;
}): ComponentChildren {
  const t = translator(language);
  const page = Math.floor(offset / size) + 1;
  const pages = Math.max(1, Math.ceil(total / size), more ? page : 0);
  if (pages <= 1 && !more) return null;
  const label = t(more ? 'pageOfMore' : 'pageOf', { page, pages });
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - size))}>
        {t('previousPage')}
      </button>
      <span>{label}</span>
      <button type="button" disabled={!more && page >= pages} onClick={() => onOffset(offset + size)}>
        {t('nextPage')}
      </button>
    </nav>
  );
}

/**
 * What only administrators or the system administrator need (hashes, methods, settings, commands,
 * the server's own words): folded away under 详情, the plain words above it.
 */
export function Technical({ language, children }: { language: Language; children: ComponentChildren }) {
  return (
    <details class="technical">
      <summary>{translator(language)('technicalDetails')}</summary>
      {children}
    </details>
  );
}

/** Shown in the browser where it can show it (the server serves these inline); others are downloaded. */
const PREVIEWABLE = /^(application\/pdf|image\/(jpeg|png|gif|webp|bmp|avif))$/;

/** A file's name that opens it: a PDF or picture in a new tab, anything else (or of unknown type) downloaded. */
export function FileLink({
  fileId,
  fileName,
  contentType,
}: {
  fileId: string;
  fileName: string;
  contentType?: string;
}) {
  return contentType && PREVIEWABLE.test(contentType) ? (
    <a class="name" href={`/api/files/${fileId}?disposition=inline`} target="_blank" rel="noopener">
      {fileName}
    </a>
  ) : (
    <a class="name" href={`/api/files/${fileId}`} download={fileName}>
      {fileName}
    </a>
  );
}

/**
 * A polite live region at the end of the document, outside every page: a page kept mounted but
 * hidden (the upload page while the clerk reads another) would silence a region of its own.
 */
export function BodyLiveRegion({ text }: { text: string }) {
  const host = useMemo(() => document.body.appendChild(document.createElement('div')), []);
  useEffect(
    () => () => {
      render(null, host);
      host.remove();
    },
    [host],
  );
  // Made at once, empty: a screen reader reads a region's changes only once it knows the region.
  useEffect(() => {
    render(
      <p class="visually-hidden announcement" role="status" aria-live="polite">
        {text}
      </p>,
      host,
    );
  }, [host, text]);
  return null;
}
