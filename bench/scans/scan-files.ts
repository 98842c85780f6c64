import fs from 'node:fs';
import path from 'node:path';

/** The first `count` files of `dir` whose names end in one of `extensions`, in name order, as paths. */
export function scanFiles(dir: string, extensions: RegExp, count: number): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => extensions.test(f))
    .sort()
    .slice(0, count)
    .map((f) => path.join(dir, f));
}
