/** Longest name we keep, in Unicode code points (a common file-system limit is 255 bytes). */
export const MAX_FILE_NAME_LENGTH = 200;

/** What a name left blank by cleaning is called ("unnamed"); its extension, if any, is kept. */
export const UNNAMED = '未命名';

// Every character that shows as nothing or rearranges what is shown: controls (Cc), format
// characters (Cf: zero-width spaces, U+FEFF, the bidirectional marks, overrides and isolates
// that make "invoice\u202Efdp.exe" display as "invoiceexe.pdf"), lone surrogates (Cs), the line
// and paragraph separators (Zl, Zp) and the other default-ignorable characters (U+3164 Hangul
// filler, U+115F, variation selectors on their own...).
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
const VARIATION_SELECTOR = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
// Text or emoji style (U+FE0E, U+FE0F) means something only after an emoji; the other selectors
// choose glyph variants of ideographs (U+E0100...), which a clerk's name may need.
const EMOJI_PRESENTATION = /[\uFE0E\uFE0F]/u;
const TAG = /[\u{E0020}-\u{E007F}]/u;

/**
 * `text` without invisible characters, NFC-normalised and trimmed. Emoji keep what makes them
 * one picture: a zero-width joiner between two pictographs (👩‍💻), a variation selector after a
 * emoji (☎️), an ideographic variation selector after its ideograph, and the tag characters of a subdivision flag (🏴 + tags).
 */
export function cleanText(text: string): string {
  const normalized = text.normalize('NFC');
  // Most names have nothing to remove: one look at the whole, not one per character.
  if (!INVISIBLE.test(normalized)) return normalized.trim();
  const points = Array.from(normalized);
  const kept: string[] = [];
  points.forEach((c, i) => {
    if (!INVISIBLE.test(c)) return void kept.push(c);
    const before = kept[kept.length - 1];
    if (c === '\u200D' && before && PICTOGRAPH.test(lastPicture(kept)) && PICTOGRAPH.test(points[i + 1] ?? ''))
      kept.push(c);
    else if (
      VARIATION_SELECTOR.test(c) &&
      before &&
      !INVISIBLE.test(before) &&
      (!EMOJI_PRESENTATION.test(c) || /\p{Emoji}/u.test(before))
    )
      kept.push(c);
    else if (TAG.test(c) && before && (before === '\u{1F3F4}' || TAG.test(before))) kept.push(c);
  });
  return kept.join('').trim();
}

// The last visible character of what is kept so far (a joiner may follow "👩🏽" or "☎️").
function lastPicture(kept: string[]): string {
  for (let i = kept.length - 1; i >= 0; i--)
    if (!VARIATION_SELECTOR.test(kept[i]!) && !/\p{Emoji_Modifier}/u.test(kept[i]!)) return kept[i]!;
  return '';
}

/**
 * The name under which an uploaded file is kept. Names are never refused: the client's
 * directory part is dropped (browsers and scripts may send "a/b/c.pdf" or "C:\\x\\c.pdf"),
 * invisible characters are removed (cleanText), and an over-long name is shortened keeping its
 * extension. A name left with nothing to show before its extension is called 未命名 ("unnamed"),
 * so "\u200B.pdf" becomes "未命名.pdf". Chinese and other printable text is kept exactly
 * (NFC-normalised).
 */
export function cleanFileName(raw: string): string {
  let name = cleanText(raw.split(/[\\/]/).pop() ?? '');
  if (name === '.' || name === '..') name = '';
  const dot = name.lastIndexOf('.');
  const stem = dot >= 0 ? name.slice(0, dot) : name;
  if (stem.trim() === '' || /^\.+$/.test(stem))
    name = dot >= 0 && dot < name.length - 1 ? UNNAMED + name.slice(dot).trim() : UNNAMED;
  const points = Array.from(name);
  if (points.length > MAX_FILE_NAME_LENGTH) {
    const at = name.lastIndexOf('.');
    const ext = at > 0 ? Array.from(name.slice(at)) : [];
    const keepExt = ext.length > 0 && ext.length <= 16 ? ext : [];
    name = points.slice(0, MAX_FILE_NAME_LENGTH - keepExt.length).join('') + keepExt.join('');
  }
  return name;
}

/** Longest upload path kept, in Unicode code points (the folders nearest the file are kept). */
export const MAX_UPLOAD_PATH_LENGTH = 1000;

/**
 * The name an upload is recorded under (the ledger's, the audit log's): its path relative to the
 * folder the clerk chose, such as "2026年移交/副本/第0012页.jpg", so that a page is found again by
 * its folder. The file's own name is cleanFileName of the last part (the catalog keeps that);
 * each folder is cleaned the same way, and empty, "." and ".." parts and a drive ("C:") are
 * dropped, so no path climbs out of the folder. Just the file name when no folder is given.
 */
export function cleanUploadPath(raw: string): string {
  const parts = raw.split(/[\\/]/);
  const name = cleanFileName(parts.pop() ?? '');
  const folders = parts
    .map((part) => cleanText(part))
    .filter((part) => part !== '' && part !== '.' && part !== '..' && !/^[A-Za-z]:$/.test(part))
    .map((part) => Array.from(part).slice(0, MAX_FILE_NAME_LENGTH).join(''));
  const length = (list: string[]) => list.reduce((n, part) => n + Array.from(part).length + 1, 0);
  while (folders.length > 0 && length(folders) + Array.from(name).length > MAX_UPLOAD_PATH_LENGTH) folders.shift();
  return [...folders, name].join('/');
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** A declared media type if it is well-formed (parameters dropped), else application/octet-stream. */
export function cleanContentType(raw: string | undefined): string {
  const type = (raw ?? '').split(';')[0]!.trim().toLowerCase();
  return CONTENT_TYPE.test(type) ? type : 'application/octet-stream';
}
