import { IMPORT_COLUMNS_ZH, IMPORT_EXAMPLE_MARK } from '../../../../shared/accounts.js';

/**
 * The template offered for download: the columns, and one example row, marked as one in its
 * first cell so that it is never imported (left in the file, it is skipped and said so).
 */
export const IMPORT_TEMPLATE = `\uFEFF${IMPORT_COLUMNS_ZH.join(',')}\r\n${IMPORT_EXAMPLE_MARK}：zhangsan,档案员,130922100,张三\r\n`;

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
