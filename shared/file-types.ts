/**
 * Kinds of file as clerks name them (PDF, 图片, 文档, 表格, 其他), for the file list's type
 * filter; and which files the browser may show (a preview) rather than only download.
 */

export const FILE_KINDS = ['pdf', 'image', 'document', 'spreadsheet', 'other'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** What makes a file one kind: its media type (exactly, or by prefix), or, when that says nothing, its extension. */
export interface FileKindRule {
  types: readonly string[];
  typePrefixes: readonly string[];
  extensions: readonly string[];
}

/**
 * The kinds other than "other" (which is every file none of these takes). Media types and
 * extensions appear under one kind only, so a file is of exactly one kind.
 */
export const FILE_KIND_RULES: Readonly<Record<Exclude<FileKind, 'other'>, FileKindRule>> = {
  pdf: { types: ['application/pdf'], typePrefixes: [], extensions: ['pdf'] },
  image: {
    types: [],
    typePrefixes: ['image/'],
    extensions: ['jpg', 'jpeg', 'png', 'gif', 'bmp', 'tif', 'tiff', 'webp', 'heic', 'avif', 'svg'],
  },
  // Word, WPS 文字, OpenDocument, RTF, OFD (the Chinese fixed-layout format) and plain text.
  document: {
    types: [
      'application/msword',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.template',
      'application/vnd.ms-word.document.macroenabled.12',
      'application/vnd.oasis.opendocument.text',
      'application/rtf',
      'text/rtf',
      'application/wps-office.wps',
      'application/wps-office.doc',
      'application/wps-office.docx',
      'application/kswps',
      'application/ofd',
      'text/plain',
    ],
    typePrefixes: [],
    extensions: ['doc', 'docx', 'dot', 'dotx', 'docm', 'wps', 'wpt', 'odt', 'rtf', 'ofd', 'txt'],
  },
  // Excel, WPS 表格, OpenDocument, CSV.
  spreadsheet: {
    types: [
      'application/vnd.ms-excel',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/vnd.ms-excel.sheet.macroenabled.12',
      'application/vnd.oasis.opendocument.spreadsheet',
      'application/wps-office.et',
      'application/wps-office.xls',
      'application/wps-office.xlsx',
      'text/csv',
    ],
    typePrefixes: [],
    extensions: ['xls', 'xlsx', 'xlsm', 'et', 'ett', 'ods', 'csv'],
  },
};

/**
 * Media types that say nothing of the content: what browsers send for an extension they do not
 * know (WPS's .wps, .et), so the kind is read from the name instead.
 */
export const GENERIC_TYPES: readonly string[] = ['', 'application/octet-stream', 'binary/octet-stream'];

/** The part of a media type that names it (no parameters), lower case. */
export function bareType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** The lower-case extension of a name or path ('' when it has none). */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

function takes(rule: FileKindRule, type: string, extension: string): boolean {
  if (GENERIC_TYPES.includes(type)) return rule.extensions.includes(extension);
  return rule.types.includes(type) || rule.typePrefixes.some((p) => type.startsWith(p));
}

/** The kind of a file uploaded as `name` with media type `contentType` (as the stores decide it). */
export function fileKindOf(contentType: string, name: string): FileKind {
  const type = bareType(contentType);
  const extension = extensionOf(name);
  for (const [kind, rule] of Object.entries(FILE_KIND_RULES)) if (takes(rule, type, extension)) return kind as FileKind;
  return 'other';
}

/**
 * Images every current browser shows (not SVG: a drawing that can carry scripts; not TIFF,
 * which browsers do not show), by their media type.
 */
const SHOWN_IMAGES: Readonly<Record<string, string>> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  bmp: 'image/bmp',
  avif: 'image/avif',
};
const SHOWN_IMAGE_TYPES = new Set(Object.values(SHOWN_IMAGES));

/**
 * How the browser may show a file: as an image, as a PDF, or not at all (downloaded only). A
 * file of a generic media type is judged by its extension. `type` is the media type to serve it
 * with; HTML, SVG and everything else that could run in the page never has one.
 */
export function previewOf(contentType: string, name: string): { kind: 'image' | 'pdf'; type: string } | undefined {
  const type = bareType(contentType);
  if (type === 'application/pdf') return { kind: 'pdf', type };
  if (SHOWN_IMAGE_TYPES.has(type)) return { kind: 'image', type };
  if (!GENERIC_TYPES.includes(type)) return undefined;
  const extension = extensionOf(name);
  if (extension === 'pdf') return { kind: 'pdf', type: 'application/pdf' };
  const image = SHOWN_IMAGES[extension];
  return image ? { kind: 'image', type: image } : undefined;
}

/**
 * Files the viewer shows page by page as the server draws them (`GET /api/files/:id/pages/:n`):
 * PDFs (Chromium 86 and 109 cannot run today's pdf.js) and TIFF scans (no browser shows TIFF).
 */
export function shownAsPages(contentType: string, name: string): boolean {
  const type = bareType(contentType);
  if (previewOf(contentType, name)?.kind === 'pdf' || type === 'image/tiff') return true;
  return GENERIC_TYPES.includes(type) && ['tif', 'tiff'].includes(extensionOf(name));
}

/** Files whose pages the server draws: those shown as pages, and the images shown as they are (for thumbnails). */
export function drawable(contentType: string, name: string): boolean {
  return shownAsPages(contentType, name) || previewOf(contentType, name) !== undefined;
}
