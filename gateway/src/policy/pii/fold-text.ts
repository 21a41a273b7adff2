// A text as a reader sees it: characters that draw nothing (zero-width spaces and joiners, soft hyphens, direction
// marks) left out, and letters, digits and signs written in another form (full-width ＠, small ﹫, 𝐦𝐚𝐭𝐡 letters,
// superscript or circled digits, invisible Unicode tag characters) as their ASCII selves. A model reads
// `jane​@example.com` with a zero-width space, or `ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ`, as the address it is: the detectors must
// read it the same way.

/**
 * Characters that draw nothing: Unicode's format characters (Cf, as tool rules drop them: zero-width spaces and
 * joiners, soft hyphens, direction marks), the combining grapheme joiner and variation selectors.
 */
const INVISIBLE = /^[\p{Cf}\u034F\uFE00-\uFE0F\u{E0100}-\u{E01EF}]$/u;

/** Compatibility forms of ASCII: superscript digits, the one dot leader, super- and subscripts, enclosed alphanumerics, small form variants, full-width forms, mathematical alphanumerics. */
const COMPATIBLE = /[\u00B2\u00B3\u00B9\u2024\u2070-\u209F\u2460-\u24FF\uFE50-\uFE6B\uFF01-\uFF5E]|\uD835[\uDC00-\uDFFF]/;

/** Unicode tag characters that spell printable ASCII (U+E0020 to U+E007E): drawn as nothing, read by models as text. */
const TAG_FIRST = 0xe0020;
const TAG_LAST = 0xe007e;

/**
 * Every UTF-16 unit that starts a character folding may change (mayFold's quick test, and the tests'): the invisible
 * ones of the Basic Multilingual Plane, the compatibility forms, and the leading surrogates of the planes' format
 * characters, tags, variation selectors and mathematical letters.
 */
export const FOLDABLE =
  /[\u00AD\u00B2\u00B3\u00B9\u034F\u0600-\u0605\u061C\u06DD\u070F\u0890\u0891\u08E2\u180E\u200B-\u200F\u202A-\u202E\u2024\u2060-\u209F\u2460-\u24FF\uFE00-\uFE0F\uFE50-\uFE6B\uFEFF\uFF01-\uFF5E\uFFF9-\uFFFB\uD804\uD80D\uD82F\uD834\uD835\uDB40]/;

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
    if (c < 0x900) {
      if (c === 0xad || c === 0xb2 || c === 0xb3 || c === 0xb9 || c === 0x34f || (c >= 0x600 && c <= 0x605) || c === 0x61c || c === 0x6dd || c === 0x70f || c === 0x890 || c === 0x891 || c === 0x8e2) return true;
      continue;
    }
    if (c < 0x180e) continue;
    if (c === 0x180e || (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) || c === 0x2024 || (c >= 0x2060 && c <= 0x209f) || (c >= 0x2460 && c <= 0x24ff)) return true;
    if (c < 0xd804) continue;
    if (c === 0xd804 || c === 0xd80d || c === 0xd82f || c === 0xd834 || c === 0xd835 || c === 0xdb40) return true;
    if ((c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xfe50 && c <= 0xfe6b) || c === 0xfeff || (c >= 0xff01 && c <= 0xff5e) || (c >= 0xfff9 && c <= 0xfffb)) return true;
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
      if (code >= TAG_FIRST && code <= TAG_LAST) out = String.fromCharCode(code - 0xe0000);
      else if (INVISIBLE.test(char)) out = '';
      else if (COMPATIBLE.test(char)) out = asciiOf(char) ?? char;
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
