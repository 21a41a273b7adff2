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

/** A digit of any script read here: ASCII, full-width, Arabic-Indic or Persian. */
function isDigitChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 0xff10 && c <= 0xff19) || (c >= 0x0660 && c <= 0x0669) || (c >= 0x06f0 && c <= 0x06f9);
}

const NEXT_DIGIT = /[0-9\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]/g;
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

/** isLinkGap of text[from, to) without cutting it out. */
function isLinkGapAt(text: string, from: number, to: number): boolean {
  const n = to - from;
  if (n === 0 || n > 3) return false;
  let spaces = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!isLinkChar(c)) return false;
    if (isWhitespace(c)) spaces++;
  }
  return spaces < 2;
}

/** The digit runs of the chain being read, as positions: groups are made only for the chains asked for. */
interface Runs {
  count: number;
  digits: number;
  starts: number[];
  ends: number[];
  leads: number[];
  international: boolean[];
}

/**
 * Splits a text into chains of digit groups joined by phone punctuation ("+1 (415) 555-2671" is one chain of four
 * groups). A `+` always starts a new chain. Calls `onChain` for each chain, left to right, that `wanted` asks for given
 * where its first group starts (with its `+` or `(`) and how many digits it has; `numbers` gets the start of every group
 * of two digits or more, of every chain. Groups are made only for the chains asked for: text full of hex ids and hashes
 * has thousands of short chains glued to letters, which no phone number is, and making each cost more than the rest of
 * the scan. `onChain` and `wanted` must not call this function again (it keeps its place in a shared expression).
 */
export function forEachDigitChain(
  text: string,
  onChain: (groups: DigitGroup[]) => void,
  wanted: (leadStart: number, digits: number) => boolean = () => true,
  numbers?: number[],
): void {
  const runs: Runs = { count: 0, digits: 0, starts: [], ends: [], leads: [], international: [] };
  const flush = () => {
    if (runs.count > 0 && wanted(runs.leads[0]!, runs.digits)) onChain(groupsOf(text, runs));
    runs.count = 0;
    runs.digits = 0;
  };
  const n = text.length;
  // The next digit is found by the regular expression engine (fast over text without digits), the run read by hand.
  NEXT_DIGIT.lastIndex = 0;
  while (NEXT_DIGIT.test(text)) {
    const start = NEXT_DIGIT.lastIndex - 1;
    let i = start + 1;
    while (i < n && isDigitChar(text.charCodeAt(i))) i++;
    NEXT_DIGIT.lastIndex = i;
    const len = i - start;
    let leadStart = start;
    let international = false;
    for (let k = 0; k < 2 && leadStart > 0; k++) {
      const c = text.charCodeAt(leadStart - 1);
      if (isPlus(c)) international = true;
      // A parenthesis belongs to the number only around an area or country code: "(415) 555-2671", "(+62) 21 …", not "(4111 …)".
      else if (!isOpenParen(c) || !isCloseParen(text.charCodeAt(i)) || len > 5) break;
      leadStart--;
    }
    if (runs.count > 0) {
      const prevEnd = runs.ends[runs.count - 1]!;
      if (international || start - prevEnd > 3 || !isLinkGapAt(text, prevEnd, start)) flush();
    }
    const at = runs.count++;
    runs.starts[at] = start;
    runs.ends[at] = i;
    runs.leads[at] = leadStart;
    runs.international[at] = international;
    runs.digits += len;
    if (numbers && len >= 2) numbers.push(start);
  }
  flush();
}

function groupsOf(text: string, runs: Runs): DigitGroup[] {
  const groups: DigitGroup[] = [];
  for (let k = 0; k < runs.count; k++) {
    const start = runs.starts[k]!;
    const end = runs.ends[k]!;
    groups.push({
      start,
      end,
      digits: asciiDigits(text.slice(start, end)),
      leadStart: runs.leads[k]!,
      international: runs.international[k]!,
      gapBefore: k > 0 ? text.slice(runs.ends[k - 1]!, start) : '',
    });
  }
  return groups;
}
