import { createRequire } from 'node:module';

type O200k = typeof import('gpt-tokenizer/encoding/o200k_base');

const require = createRequire(import.meta.url);
let loaded: O200k | undefined;

/**
 * The o200k_base tokenizer, loaded on first use: its tables cost ~70 MB of memory, and a gateway whose upstreams
 * report usage never needs them.
 */
function o200k(): O200k {
  if (loaded === undefined) {
    loaded = require('gpt-tokenizer/encoding/o200k_base') as O200k;
    // Its merge cache keeps a word's tokens per word (100,000 words by default); a word may be a whole piece of
    // PIECE_CHARS, so the default could hold hundreds of MB of an adversary's text. 4,096 caps it at about 25 MB.
    loaded.setMergeCacheSize(MERGE_CACHE_WORDS);
  }
  return loaded;
}

const MERGE_CACHE_WORDS = 4_096;

/** Special-token markers in user text are ordinary text for the upstream: counted as text, never rejected. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/*
 * Long texts go to the tokenizer in pieces of at most PIECE_CHARS: its byte-pair merge is quadratic in the length of one
 * pre-tokenized word, and a run without whitespace ('DE' x 100,000, 200 KB) is one word that blocked the event loop for
 * seconds to minutes. Pieces end where the o200k pre-tokenizer splits anyway (see isSplitPoint), so their counts add up
 * to the count of the whole text; only a piece with no such point in PIECE_CHARS is cut blindly.
 */

/** The most characters (UTF-16 code units) handed to the tokenizer at once; texts up to this length go whole. */
export const PIECE_CHARS = 2_048;

const WHITESPACE = /\s/y;

/** Whether text[i] is whitespace as the pre-tokenizer's \s sees it (the same set with or without the u flag). */
function isSpace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  WHITESPACE.lastIndex = i;
  return WHITESPACE.test(text);
}

const isNewline = (c: number) => c === 0x0a || c === 0x0d;

/**
 * Whether cutting `text` before index i (0 < i < length) leaves the o200k pre-tokenization unchanged, so that
 * tokens(text) = tokens(text[0, i)) + tokens(text[i, end)). The o200k split pattern (gpt-tokenizer's O200K_TOKEN_SPLIT_PATTERN) is
 *   [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?   (A; B is A with * and + swapped)
 *   | \p{N}{1,3} | ' '?[^\s\p{L}\p{N}]+[\r\n/]* | \s*[\r\n]+ | \s+(?!\S) | \s+
 * It has no lookbehind, its matches tile the text, and only the prefix of A and B, the whitespace alternatives and the
 * trailing [\r\n/]* of the punctuation one reach across a non-whitespace/whitespace edge. Two kinds of point are safe:
 * - text[i-1] non-whitespace, text[i] whitespace but not \r or \n: no match holds both (a leading whitespace character
 *   only ever starts a match), and every match attempt that reaches i fails there exactly as at the end of the text.
 * - text[i-1] \r or \n, text[i] non-whitespace but not '/': the whitespace run (or punctuation) before i ends in a
 *   newline, so \s*[\r\n]+ (or [\r\n/]*) ends its match at i, and no attempt tells text[i] from the end of the text.
 * In "word word", it is the point before each space; in "line\nline", the point after each newline.
 */
export function isSplitPoint(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  if (isSpace(text, i)) return !isNewline(text.charCodeAt(i)) && !isSpace(text, i - 1);
  return isNewline(text.charCodeAt(i - 1)) && text.charCodeAt(i) !== 0x2f;
}

/**
 * Where the piece of `text` that starts at `start` ends: the text's end when it is within `max` characters, else the last
 * split point within them, else `max` characters on (one fewer rather than between the halves of a surrogate pair).
 * Two successive pieces always span at least `max` characters, so the backward scans cost O(length) in all.
 */
export function pieceEnd(text: string, start: number, max = PIECE_CHARS): number {
  const limit = start + max;
  if (limit >= text.length) return text.length;
  for (let i = limit; i > start; i--) if (isSplitPoint(text, i)) return i;
  // A blind cut: a run this long without a split point (base64, minified code, 'DE' x n) may then count a token or so off.
  const c = text.charCodeAt(limit - 1);
  return c >= 0xd800 && c <= 0xdbff && max > 1 ? limit - 1 : limit;
}

/** `text` cut to its first `max` (at least 0) tokens, or null when it has no more than that. */
export function truncateToTokens(text: string, max: number): string | null {
  if (text.length <= PIECE_CHARS) {
    const tokens = o200k().encode(text, AS_TEXT);
    return tokens.length > max ? o200k().decode(tokens.slice(0, max)) : null;
  }
  const tokens: number[] = [];
  for (let start = 0; start < text.length && tokens.length <= max; ) {
    const end = pieceEnd(text, start);
    for (const token of o200k().encode(text.slice(start, end), AS_TEXT)) tokens.push(token);
    start = end;
  }
  return tokens.length > max ? o200k().decode(tokens.slice(0, max)) : null;
}

/** Tokens of `text` in o200k_base (GPT-4o, GPT-4.1, o-series, GPT-5). */
export function countTokens(text: string): number {
  if (text.length <= PIECE_CHARS) return text.length === 0 ? 0 : o200k().countTokens(text, AS_TEXT);
  let n = 0;
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    n += o200k().countTokens(text.slice(start, end), AS_TEXT);
    start = end;
  }
  return n;
}
