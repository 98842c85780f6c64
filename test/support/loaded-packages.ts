import fs from 'node:fs';
import { registerHooks } from 'node:module';

/**
 * Preloaded into a process (NODE_OPTIONS="--import=<this file>") by tests of what the server
 * loads: each package of node_modules the process loads, imported or required, is appended to the
 * file LOADED_PACKAGES_FILE names, as "<pid> <package>" (child processes inherit the option and
 * write to the same file, told apart by their pid).
 */
const file = process.env.LOADED_PACKAGES_FILE;
if (file) {
  const seen = new Set<string>();
  registerHooks({
    load(url, context, nextLoad) {
      const name = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
      if (name && !seen.has(name)) {
        seen.add(name);
        fs.appendFileSync(file, `${process.pid} ${name}\n`);
      }
      return nextLoad(url, context);
    },
  });
}

/** The packages process `pid` loaded, as written to `file`. */
export function packagesLoaded(file: string, pid: number): Set<string> {
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
  return new Set(lines.filter((line) => line.startsWith(`${pid} `)).map((line) => line.slice(`${pid} `.length)));
}
