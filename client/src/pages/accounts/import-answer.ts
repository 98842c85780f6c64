/** The template offered for download (shared: the server knows its example row). */
export { IMPORT_TEMPLATE } from '../../../../shared/accounts.js';

/**
 * The rows of the import's answer, the header left out. Its fields may be quoted (a name with a
 * comma) but never hold a line break: names, units and passwords cannot.
 */
export function answerRows(text: string): string[][] {
  const lines = text
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  return lines.map((line) =>
    Array.from(line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g), ([, quoted, plain]) =>
      quoted !== undefined ? quoted.replace(/""/g, '"') : (plain ?? ''),
    ),
  );
}
