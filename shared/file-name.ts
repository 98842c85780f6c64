/** Longest name we keep, in Unicode code points (a common file-system limit is 255 bytes). */
export const MAX_FILE_NAME_LENGTH = 200;

// C0/C1 controls, DEL, and the bidirectional overrides/isolates/marks that can make
// "invoice\u202Efdp.exe" display as "invoiceexe.pdf".
const UNSAFE_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The name under which an uploaded file is kept. Names are never refused: the client's
 * directory part is dropped (browsers and scripts may send "a/b/c.pdf" or "C:\\x\\c.pdf"),
 * unsafe characters are removed, and an over-long name is shortened keeping its extension.
 * Chinese and other printable Unicode text is kept exactly (NFC-normalised).
 */
export function cleanFileName(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? '';
  let name = base.normalize('NFC').replace(UNSAFE_CHARACTERS, '').trim();
  if (name === '.' || name === '..') name = '';
  const points = Array.from(name);
  if (points.length > MAX_FILE_NAME_LENGTH) {
    const dot = name.lastIndexOf('.');
    const ext = dot > 0 ? Array.from(name.slice(dot)) : [];
    const keepExt = ext.length > 0 && ext.length <= 16 ? ext : [];
    name = points.slice(0, MAX_FILE_NAME_LENGTH - keepExt.length).join('') + keepExt.join('');
  }
  return name === '' ? 'unnamed' : name;
}

const CONTENT_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;

/** A declared media type if it is well-formed (parameters dropped), else application/octet-stream. */
export function cleanContentType(raw: string | undefined): string {
  const type = (raw ?? '').split(';')[0]!.trim().toLowerCase();
  return CONTENT_TYPE.test(type) ? type : 'application/octet-stream';
}
