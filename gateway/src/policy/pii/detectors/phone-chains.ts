import { isWhitespace } from './chars.js';

/** A run of digits (ASCII, full-width, Arabic-Indic or Persian) inside a text. */
export interface DigitGroup {
  start: number;
  end: number;
  digits: string;
  /** Start of the group including a directly preceding `+` or `(`. */
  leadStart: number;
  international: boolean;
  /** The text between the previous group of the chain and this one ('' for the first). */
  gapBefore: string;
}

function isPlus(c: number): boolean {
  return c === 43 || c === 0xff0b;
}

function isOpenParen(c: number): boolean {
  return c === 40 || c === 0xff08;
}

function isCloseParen(c: number): boolean {
  return c === 41 || c === 0xff09;
}

/** Characters that may sit between the digit groups of one phone number. */
function isLinkChar(c: number): boolean {
  return (
    c === 32 || c === 0xa0 || c === 0x202f || c === 0x2009 || c === 0x3000 ||
    c === 45 || c === 46 || c === 47 || c === 40 || c === 41 || c === 0xff08 || c === 0xff09 ||
    (c >= 0x2010 && c <= 0x2015) || c === 0x2212 || c === 0xff0d || c === 0x30fc
  );
}

function isLinkGap(gap: string): boolean {
  if (gap.length === 0 || gap.length > 3) return false;
  let spaces = 0;
  for (let i = 0; i < gap.length; i++) {
    const c = gap.charCodeAt(i);
    if (!isLinkChar(c)) return false;
    if (isWhitespace(c)) spaces++;
  }
  return spaces < 2;
}

/**
 * Splits a text into chains of digit groups joined by phone punctuation ("+1 (415) 555-2671" is one chain
 * of four groups). A `+` always starts a new chain. Calls `onChain` for each chain, left to right.
 */
const DIGIT_RUN = /[0-9\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]+/g;
const OTHER_DIGIT = /[\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]/;

/** Full-width, Arabic-Indic and Persian digits as ASCII digits. */
function asciiDigits(run: string): string {
  if (!OTHER_DIGIT.test(run)) return run;
  let out = '';
  for (let k = 0; k < run.length; k++) {
    const c = run.charCodeAt(k);
    out += String.fromCharCode(c >= 0xff10 ? c - 0xff10 + 48 : c >= 0x06f0 ? c - 0x06f0 + 48 : c >= 0x0660 ? c - 0x0660 + 48 : c);
  }
  return out;
}

export function forEachDigitChain(text: string, onChain: (groups: DigitGroup[]) => void): void {
  let chain: DigitGroup[] = [];
  DIGIT_RUN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = DIGIT_RUN.exec(text)) !== null) {
    const start = m.index;
    const raw = m[0];
    const i = start + raw.length;
    const digits = asciiDigits(raw);
    let leadStart = start;
    let international = false;
    for (let k = 0; k < 2 && leadStart > 0; k++) {
      const c = text.charCodeAt(leadStart - 1);
      if (isPlus(c)) international = true;
      // A parenthesis belongs to the number only around an area or country code: "(415) 555-2671", "(+62) 21 …", not "(4111 …)".
      else if (!isOpenParen(c) || !isCloseParen(text.charCodeAt(i)) || raw.length > 5) break;
      leadStart--;
    }
    const prev = chain.length > 0 ? chain[chain.length - 1] : undefined;
    const gap = prev && start - prev.end <= 3 ? text.slice(prev.end, start) : '';
    if (prev && (international || !isLinkGap(gap))) {
      onChain(chain);
      chain = [];
    }
    chain.push({ start, end: i, digits, leadStart, international, gapBefore: chain.length > 0 ? gap : '' });
  }
  if (chain.length > 0) onChain(chain);
}
