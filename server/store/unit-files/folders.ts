/**
 * A folder of 本单位文件 as a range of names: the names under `案卷007` are those from `案卷007/`
 * up to (not including) `案卷0070`, '0' being the character after '/'; in code-point order, which
 * is both stores' order of names (SQLite's BINARY of UTF-8, MongoDB's simple collation).
 */
export function folderRange(folder: string): {
  low: string | null;
  high: string | null;
  start: number;
  prefix: string;
} {
  const path = folder.replace(/^\/+|\/+$/g, '');
  if (path === '') return { low: null, high: null, start: 1, prefix: '' };
  const prefix = `${path}/`;
  // `start`: where a name's rest begins, 1-based, in characters (SQLite's substr; MongoDB's $substrCP less one).
  return { low: prefix, high: `${path}0`, start: Array.from(prefix).length + 1, prefix };
}
