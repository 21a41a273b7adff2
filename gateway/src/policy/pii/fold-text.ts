// A text as a reader sees it: characters that draw nothing (zero-width spaces and joiners, soft hyphens, direction
// marks) left out, and letters, digits and signs written in another form (full-width ＠, small ﹫, 𝐦𝐚𝐭𝐡 letters,
// superscript or circled digits) as their ASCII selves. A model reads `jane​@example.com` with a zero-width space, or
// `ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ`, as the address it is: the detectors must read it the same way.

/** Characters that draw nothing: the format characters writers use to break a word without showing it. */
const INVISIBLE = /[\u00AD\u034F\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\uFE00-\uFE0F\uFEFF]/;

/**
 * Every character folding may change: the invisible ones, and the compatibility forms of ASCII (superscript digits,
 * the one dot leader, super- and subscripts, enclosed alphanumerics, small form variants, full-width forms,
 * mathematical alphanumerics).
 */
export const FOLDABLE =
  /[\u00AD\u034F\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u209F\uFE00-\uFE0F\uFEFF\u00B2\u00B3\u00B9\u2024\u2460-\u24FF\uFE50-\uFE6B\uFF01-\uFF5E]|\uD835[\uDC00-\uDFFF]/;

/** A folded text, and where each of its UTF-16 units came from in the original. */
export interface FoldedText {
  text: string;
  /** For each unit of `text`: the index in the original where the character it came from starts. */
  startOf: Uint32Array;
  /** For each unit of `text`: the index in the original just after the character it came from. */
  endOf: Uint32Array;
}

/**
 * The one ASCII character a compatibility character stands for (NFKC gives it), else undefined. One for one, so a
 * match's ends always fall on the ends of characters of the original (⑩, two digits, is left as it is).
 */
function asciiOf(char: string): string | undefined {
  const n = char.normalize('NFKC');
  if (n.length !== 1) return undefined;
  const c = n.charCodeAt(0);
  return c >= 0x20 && c <= 0x7e ? n : undefined;
}

/** Text of ASCII only: nothing to fold (most texts; a regular expression tells fastest). */
const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** Whether some character of `text` is FOLDABLE: a loop of comparisons, faster than the pattern on text beyond ASCII. */
export function mayFold(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xad) continue;
    if (c === 0xad || c === 0xb2 || c === 0xb3 || c === 0xb9 || c === 0x34f || c === 0x61c || c === 0x180e) return true;
    if (c < 0x200b) continue;
    if (c <= 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2060 && c <= 0x209f) || c === 0x2024 || (c >= 0x2460 && c <= 0x24ff)) return true;
    if (c < 0xd835) continue;
    if (c === 0xd835 || (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xfe50 && c <= 0xfe6b) || c === 0xfeff || (c >= 0xff01 && c <= 0xff5e)) return true;
  }
  return false;
}

/** The text folded (see the top of this file), or undefined when folding changes nothing. */
export function foldText(text: string): FoldedText | undefined {
  if (ASCII_ONLY.test(text) || !mayFold(text)) return undefined;
  const units: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  let changed = false;
  for (let i = 0; i < text.length; ) {
    const code = text.codePointAt(i)!;
    const width = code > 0xffff ? 2 : 1;
    const char = width === 1 ? text[i]! : text.slice(i, i + 2);
    let out: string | undefined = char;
    if (code >= 0x80) {
      if (INVISIBLE.test(char)) out = '';
      else if (FOLDABLE.test(char)) out = asciiOf(char) ?? char;
    }
    if (out !== char) changed = true;
    for (let k = 0; k < out.length; k++) {
      units.push(out[k]!);
      starts.push(i);
      ends.push(i + width);
    }
    i += width;
  }
  if (!changed) return undefined;
  return { text: units.join(''), startOf: Uint32Array.from(starts), endOf: Uint32Array.from(ends) };
}
