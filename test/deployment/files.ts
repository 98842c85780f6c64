import fs from 'node:fs';
import { parse } from 'yaml';

/** The checkout's root (this file runs from dist/test/deployment/). */
export const ROOT = new URL('../../../', import.meta.url).pathname;

export function readRepoFile(relative: string): string {
  return fs.readFileSync(ROOT + relative, 'utf8');
}

/**
 * Compose's interpolation of ${NAME}, ${NAME:-default} and ${NAME-default} with these variables
 * (the .env of an installation), before the YAML is read as compose reads it: merge keys on.
 */
export function loadCompose(relative: string, env: Record<string, string> = {}): ComposeFile {
  const text = readRepoFile(relative).replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}/g,
    (_, name: string, op: string | undefined, fallback: string | undefined) => {
      const value = env[name];
      if (op === ':-') return value === undefined || value === '' ? (fallback ?? '') : value;
      if (op === '-') return value ?? fallback ?? '';
      return value ?? '';
    },
  );
  return parse(text, { merge: true }) as ComposeFile;
}

export interface ServiceSecret {
  source: string;
  uid?: string;
  gid?: string;
  mode?: number;
}

export interface Service {
  image?: string;
  build?: unknown;
  profiles?: string[];
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | number>;
  secrets?: (string | ServiceSecret)[];
  volumes?: (string | { type: string; source: string; target: string; bind?: { create_host_path?: boolean } })[];
  ports?: string[];
  mem_limit?: string;
  cpus?: string | number;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string; start_interval?: string; start_period?: string };
}

export interface ComposeFile {
  services: Record<string, Service>;
  secrets?: Record<string, { environment?: string; file?: string }>;
}
