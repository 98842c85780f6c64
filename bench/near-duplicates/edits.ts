import * as OpenCC from 'opencc-js';
import type { CorpusDoc } from './corpus.js';

/** A small seeded generator (mulberry32): the same corpus and edits on every run. */
export class Random {
  constructor(private state: number) {}
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const toTraditional = OpenCC.Converter({ from: 'cn', to: 'tw' });

/** Sentences (with their ending punctuation) and line breaks, as separate pieces. */
function sentences(text: string): string[] {
  return text.match(/[^。！？!?；;\n]+[。！？!?；;]*|\n+/g) ?? [text];
}

const ZH_ANNOTATIONS = [
  '（注：此处原文字迹不清）',
  '【编者按：本文据档案原件整理】',
  '（原件第二页缺失）',
  '〔此段为后人补录〕',
  '（注：以上内容经核对无误）',
];
const EN_ANNOTATIONS = [
  "[Editor's note: transcribed from the original]",
  '(illegible in the original)',
  '[sic]',
  '(see the appendix)',
  "[Archivist's note: second page missing]",
];
const ZH_BOILERPLATE = [
  '首页 > 档案资料 > 正文',
  '发布时间：2019-03-12 09:30  来源：本站  作者：管理员',
  '【打印本页】【关闭窗口】',
  '版权所有 © 2019 某县档案馆  备案号：冀ICP备12345678号',
  '上一篇：关于开展档案整理工作的通知  下一篇：无',
  '分享到：微信 微博 QQ空间',
];
const EN_BOILERPLATE = [
  'Home > Archive > Documents',
  'Posted on March 12, 2019 by admin',
  'Print this page | Close window',
  'Copyright © 2019 County Archives. All rights reserved.',
  'Share this: Facebook Twitter Email',
  'Previous post | Next post',
];

/** Full-width punctuation and its ASCII look-alike: swapped both ways by careless re-typing. */
const PUNCTUATION: Array<[string, string]> = [
  ['，', ','],
  ['。', '.'],
  ['：', ':'],
  ['；', ';'],
  ['！', '!'],
  ['？', '?'],
  ['（', '('],
  ['）', ')'],
  ['“', '"'],
  ['”', '"'],
];

export type EditKind =
  'insert' | 'delete' | 'reorder' | 'punctuation' | 'whitespace' | 'script' | 'annotation' | 'boilerplate';

/**
 * One realistic edit of a document saved again: a sentence put in (from another document of its
 * language) or taken out, two sentences swapped, punctuation and spacing changed, all or part of
 * it in traditional script, an archivist's annotation, stray lines of the web page it was copied from.
 */
export function edit(text: string, kind: EditKind, doc: CorpusDoc, donors: readonly CorpusDoc[], rng: Random): string {
  const zh = doc.language === 'zh';
  const parts = sentences(text);
  const spots = parts.map((p, i) => (p.startsWith('\n') ? -1 : i)).filter((i) => i >= 0);
  switch (kind) {
    case 'insert': {
      const donor = rng.pick(donors.filter((d) => d.language === doc.language && d.id !== doc.id));
      const donated = sentences(donor.text).filter((s) => !s.startsWith('\n') && s.length > 4);
      parts.splice(rng.int(parts.length + 1), 0, rng.pick(donated.length ? donated : [donor.text.slice(0, 20)]));
      return parts.join('');
    }
    case 'delete':
      if (spots.length < 4) return text;
      parts.splice(rng.pick(spots), 1);
      return parts.join('');
    case 'reorder': {
      if (spots.length < 3) return text;
      const k = rng.int(spots.length - 1);
      const [i, j] = [spots[k]!, spots[k + 1]!];
      [parts[i], parts[j]] = [parts[j]!, parts[i]!];
      return parts.join('');
    }
    case 'punctuation': {
      const toAscii = rng.next() < 0.5;
      return [...text]
        .map((c) => {
          const pair = PUNCTUATION.find(([full, half]) => (toAscii ? full : half) === c);
          return pair && rng.next() < 0.7 ? (toAscii ? pair[1] : pair[0]) : c;
        })
        .join('');
    }
    case 'whitespace':
      return text
        .replace(/\n/g, () => (rng.next() < 0.5 ? ' ' : '\n\n'))
        .replace(/([，。,.])/g, (c) => (rng.next() < 0.2 ? `${c} ` : c));
    case 'script': {
      if (!zh) return text.toUpperCase();
      // Whole, or from some point on (a document pasted together from two sources).
      const from = rng.next() < 0.5 ? 0 : rng.int(text.length);
      return text.slice(0, from) + toTraditional(text.slice(from));
    }
    case 'annotation':
      parts.splice(rng.int(parts.length + 1), 0, rng.pick(zh ? ZH_ANNOTATIONS : EN_ANNOTATIONS));
      return parts.join('');
    case 'boilerplate': {
      const lines = zh ? ZH_BOILERPLATE : EN_BOILERPLATE;
      const head = rng.next() < 0.5 ? `${rng.pick(lines)}\n` : '';
      const tail = !head || rng.next() < 0.5 ? `\n${rng.pick(lines)}` : '';
      return head + text + tail;
    }
  }
}

export const EDITS: readonly EditKind[] = [
  'insert',
  'delete',
  'reorder',
  'punctuation',
  'whitespace',
  'script',
  'annotation',
  'boilerplate',
];

/** A copy of the document with one to three different edits. */
export function variant(
  doc: CorpusDoc,
  donors: readonly CorpusDoc[],
  rng: Random,
): { text: string; edits: EditKind[] } {
  const count = 1 + rng.int(3);
  const kinds = new Set<EditKind>();
  while (kinds.size < count) kinds.add(rng.pick(EDITS));
  let text = doc.text;
  for (const kind of kinds) text = edit(text, kind, doc, donors, rng);
  return { text, edits: [...kinds] };
}
