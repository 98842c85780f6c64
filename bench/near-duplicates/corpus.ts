import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * Real text shipped by Debian packages (`apt-get install fortunes-zh manpages-zh fortunes-min
 * manpages`): Tang and Song poems and Chinese sayings (short), the Chinese and English manual
 * pages (long), English quotations (short). Documents of one group (a poet, a manual section, a
 * fortune file) are on the same topic: the negatives a near-duplicate detector must tell apart.
 */
export interface CorpusDoc {
  id: string;
  /** Documents on the same topic: one poet's poems, one section's manual pages. */
  group: string;
  language: 'zh' | 'en';
  text: string;
}

export const CORPUS_PACKAGES = ['fortunes-zh', 'manpages-zh', 'fortunes-min', 'manpages'];

const FORTUNES = '/usr/share/games/fortunes';

export class CorpusMissingError extends Error {}

function need(file: string): string {
  if (!fs.existsSync(file))
    throw new CorpusMissingError(
      `${file} is missing: install the corpus with \`apt-get install ${CORPUS_PACKAGES.join(' ')}\``,
    );
  return file;
}

/** A fortune file's entries (separated by lines of "%"), without the terminal colour codes some carry. */
function fortunes(file: string): string[] {
  return (
    fs
      .readFileSync(need(file), 'utf8')
      // eslint-disable-next-line no-control-regex -- terminal colour codes are what is removed
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split(/^%\s*$/m)
      .map((entry) => entry.trim())
      .filter(Boolean)
  );
}

/** A manual page's text: the roff requests and escapes taken out, the words kept. */
export function roffText(source: string): string {
  const lines: string[] = [];
  for (const line of source.split('\n')) {
    if (line.startsWith('.\\"') || line.startsWith('\'\\"')) continue;
    let text = line;
    if (line.startsWith('.') || line.startsWith("'")) {
      const m = /^[.'](SH|SS|B|I|BR|RB|IR|RI|BI|IB|SM|SB|TP|IP|HP)\b\s*(.*)$/.exec(line);
      if (!m) continue;
      text = m[2]!.replace(/"/g, '');
    }
    text = text
      .replace(/\\f(\[[^\]]*\]|\(..|.)/g, '')
      .replace(/\\\*?\((..)/g, ' ')
      .replace(/\\\*\[[^\]]*\]/g, '')
      .replace(/\\s[+-]?\d/g, '')
      .replace(/\\[-e]/g, (c) => (c === '\\-' ? '-' : '\\'))
      .replace(/\\[&|^%,/:]/g, '')
      .replace(/\\ /g, ' ')
      .trim();
    if (text) lines.push(text);
  }
  return lines.join('\n');
}

/** The manual pages a Debian package installed (by its file list: the same pages on every machine). */
function manualPages(pkg: string, language: 'zh' | 'en', minChars: number, under = '/usr/share/man/man'): CorpusDoc[] {
  const docs: CorpusDoc[] = [];
  const files = fs
    .readFileSync(need(`/var/lib/dpkg/info/${pkg}.list`), 'utf8')
    .split('\n')
    .filter((f) => f.includes(under) && /\/man\d\/[^/]+\.gz$/.test(f))
    .sort();
  for (const file of files) {
    {
      const section = path.basename(path.dirname(file));
      const name = path.basename(file);
      if (!fs.existsSync(file) || fs.lstatSync(file).isSymbolicLink()) continue;
      const source = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8');
      if (/^\.so /m.test(source)) continue; // a page that only points at another
      const text = roffText(source);
      if (text.length >= minChars)
        docs.push({
          id: `${language}-man/${section}/${name.replace(/\.gz$/, '')}`,
          group: `${language}-man/${section}`,
          language,
          text,
        });
    }
  }
  return docs;
}

export function loadCorpus(): CorpusDoc[] {
  const docs: CorpusDoc[] = [];
  for (const file of ['tang300', 'song100']) {
    fortunes(path.join(FORTUNES, file)).forEach((text, i) => {
      // The poet is the second line ("作者：杜甫"): one poet's poems are on the same topic.
      const poet = /作者：(\S+)/.exec(text)?.[1] ?? 'unknown';
      docs.push({ id: `${file}/${i}`, group: `${file}/${poet}`, language: 'zh', text });
    });
  }
  fortunes(path.join(FORTUNES, 'chinese')).forEach((text, i) => {
    if (text.length >= 40) docs.push({ id: `chinese/${i}`, group: 'chinese', language: 'zh', text });
  });
  for (const file of ['fortunes', 'literature', 'riddles']) {
    fortunes(path.join(FORTUNES, file)).forEach((text, i) => {
      if (text.length >= 80) docs.push({ id: `en-${file}/${i}`, group: `en-${file}`, language: 'en', text });
    });
  }
  // zh_TW holds traditional versions of the same pages: near-duplicates of zh_CN's, not negatives.
  docs.push(...manualPages('manpages-zh', 'zh', 300, '/zh_CN/'));
  docs.push(...manualPages('manpages', 'en', 300));
  return docs;
}
