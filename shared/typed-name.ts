import { z } from 'zod';

/**
 * Names a person types (an account's display name, a unit's name, an API token's label): one
 * normalisation and one check, used by every request schema, the server's services and the
 * archive command, so a name refused in one place is refused in all. A name shows to other people
 * beside names like it (a unit among its siblings, a person in a report), so it must not hold
 * what shows as nothing or rearranges the text around it: two names that look alike must be
 * the same name.
 */
export interface NameRule {
  /** The longest name, in characters (code points, not UTF-16 units: a rare character takes two). */
  max: number;
  /** An empty name stands for "none" (a display name, a token label) instead of being refused. */
  optional?: boolean;
  /** The name becomes part of a path shown as "河北省 / 沧州市 / …": "/" and its lookalikes are refused. */
  inPaths?: boolean;
}

export type NameProblem =
  | { problem: 'empty' }
  | { problem: 'too_long'; max: number }
  /** `character` as "U+3164"; `at` counts characters from 1. */
  | { problem: 'hidden_character'; character: string; at: number }
  | { problem: 'path_separator'; character: string; at: number }
  | { problem: 'no_visible_character' };

export type TypedName = { ok: true; name: string } | ({ ok: false } & NameProblem);

// What shows as nothing or moves text about: controls (Cc), format characters (Cf: zero-width
// spaces and joiners, the bidirectional marks, overrides and isolates, the soft hyphen, U+180E),
// lone surrogates (Cs), private-use (Co) and unassigned (Cn) code points (no font shows them the
// same way twice), line and paragraph separators (Zl, Zp), the other default-ignorable characters
// (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, which are letters; the combining grapheme
// joiner) and the braille blank U+2800, a symbol drawn as an empty cell.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;
// Variation selectors are default-ignorable too, but a name may need one to choose a glyph: an
// ideographic variant (U+E0100…) after a rare character of a name, a Mongolian form (U+180B…),
// text or emoji style (U+FE0E, U+FE0F). Kept directly after a visible character only.
const VARIATION_SELECTOR = /[\u180B-\u180D\u180F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/u;
// A character that shows: a letter, a digit, punctuation or a symbol (not a mark alone, not a space).
const VISIBLE = /[\p{L}\p{N}\p{P}\p{S}]/u;
// "/" and the characters drawn like it (Unicode's confusables of the solidus that are punctuation
// or symbols, not letters of a script): a unit named "沧州市∕青县" would read as two units.
const PATH_SEPARATOR = /[/\u1735\u2044\u2215\u2571\u27CB\u29F8\u2F03\u3033\u31D3\uFF0F\u{1F67C}]/u;
// Any run of spaces (the ideographic space U+3000 of a Chinese keyboard, the no-break space of
// a pasted text, the thin and wide spaces U+2000–U+200A…) is one ordinary space: "清州 镇" and
// "清州\u3000镇" would look alike, so they are the same name.
const SPACES = /\p{Zs}+/gu;

/** A name as typed, normalised (NFC, trimmed, each run of spaces one space) and checked. */
export function typedName(raw: string, rule: NameRule): TypedName {
  const name = raw.normalize('NFC').trim().replace(SPACES, ' ');
  if (name === '') return rule.optional ? { ok: true, name } : { ok: false, problem: 'empty' };
  const characters = Array.from(name);
  for (const [i, c] of characters.entries()) {
    if (HIDDEN.test(c) && !(VARIATION_SELECTOR.test(c) && i > 0 && VISIBLE.test(characters[i - 1]!)))
      return { ok: false, problem: 'hidden_character', character: codePoint(c), at: i + 1 };
    if (rule.inPaths && PATH_SEPARATOR.test(c))
      return { ok: false, problem: 'path_separator', character: codePoint(c), at: i + 1 };
  }
  if (!VISIBLE.test(name)) return { ok: false, problem: 'no_visible_character' };
  if (characters.length > rule.max) return { ok: false, problem: 'too_long', max: rule.max };
  return { ok: true, name };
}

function codePoint(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** What is wrong, in the server's words (English), for a message naming the field. */
export function nameProblemText(problem: NameProblem): string {
  switch (problem.problem) {
    case 'empty':
      return 'a name is needed';
    case 'too_long':
      return `a name is at most ${problem.max} characters`;
    case 'hidden_character':
      return `a name has no control or invisible characters (such as a line break, a zero-width space, a bidirectional override or a blank-looking Hangul filler), but character ${problem.at} is ${problem.character}`;
    case 'path_separator':
      return `a unit name has no "/" or character drawn like it, because " / " separates the units of a path, but character ${problem.at} is ${problem.character}`;
    case 'no_visible_character':
      return 'a name needs at least one letter, digit, punctuation mark or symbol';
  }
}

/** The request schema of a typed name: the normalised name, or an issue saying what is wrong. */
export function typedNameField(rule: NameRule) {
  return z.string().transform((raw, ctx) => {
    const typed = typedName(raw, rule);
    if (typed.ok) return typed.name;
    ctx.addIssue({ code: 'custom', message: nameProblemText(typed) });
    return z.NEVER;
  });
}
