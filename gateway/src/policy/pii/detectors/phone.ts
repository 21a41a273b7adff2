import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { isAsciiAlnum, isAsciiDigit, isLatinLetter, isWhitespace } from './chars.js';
import { forEachDigitChain, type DigitGroup } from './phone-chains.js';
import { NumberContext } from './phone-context.js';
import { isNationalNumberSomewhere } from './phone-regions.js';

// Seven digits, consecutive or joined by up to three characters of phone punctuation.
const MAYBE_PHONE = /[0-9\uff10-\uff19\u0660-\u0669\u06f0-\u06f9](?:[ \u00a0\u202f\u2009\u3000().\/\uff08\uff09\u2010-\u2015\u2212\uff0d\u30fc-]{0,3}[0-9\uff10-\uff19\u0660-\u0669\u06f0-\u06f9]){6}/;

/** Two numbers in one chain are split where the gap holds a space or a slash ("415-555-2671/415-555-2672"). */
function isNumberBreak(gap: string): boolean {
  for (let i = 0; i < gap.length; i++) {
    const c = gap.charCodeAt(i);
    if (isWhitespace(c) || c === 47) return true;
  }
  return false;
}

function gluedBefore(text: string, start: number): boolean {
  if (start === 0) return false;
  const c = text.charCodeAt(start - 1);
  if (isLatinLetter(c) || isAsciiDigit(c) || c === 95) return true;
  // # @ $ & / \ % [ and currency signs: ids, handles, prices, paths, indexes.
  if ('#@$&/\\%[€£¥'.includes(text[start - 1])) return true;
  if (c === 45 || c === 46 || c === 44) return start >= 2 && isAsciiAlnum(text.charCodeAt(start - 2));
  return false;
}

function gluedAfter(text: string, end: number): boolean {
  if (end >= text.length) return false;
  const c = text.charCodeAt(end);
  if ('%€$£¥°@]'.includes(text[end])) return true;
  const next = end + 1 < text.length ? text.charCodeAt(end + 1) : -1;
  // An extension ("x23") is not part of the match but does not disqualify it.
  if ((c === 120 || c === 88) && isAsciiDigit(next)) return false;
  if (isLatinLetter(c) || isAsciiDigit(c) || c === 95) return true;
  // A time (":30"), a decimal (".5", ",5"), a fraction or date ("/12"), an id ("-A1").
  if (c === 58 || c === 46 || c === 44 || c === 47) return isAsciiDigit(next);
  if (c === 45) return isAsciiAlnum(next);
  return false;
}

function isDayMonth(a: number, b: number): boolean {
  return a >= 1 && b >= 1 && ((a <= 31 && b <= 12) || (a <= 12 && b <= 31));
}

/** 2024-01-15, 15.01.2024, 01/15/24: the first three groups read as a date with one separator. */
function isDateLike(groups: readonly DigitGroup[], i: number, j: number): boolean {
  if (j - i < 2) return false;
  const [a, b, c] = [groups[i].digits, groups[i + 1].digits, groups[i + 2].digits];
  const sep1 = groups[i + 1].gapBefore;
  const sep2 = groups[i + 2].gapBefore;
  if (sep1 !== sep2 || !['-', '.', '/'].includes(sep1)) return false;
  if (a.length === 4 && b.length <= 2 && c.length <= 2) return isDayMonth(Number(c), Number(b));
  if (a.length > 2 || b.length > 2) return false;
  return (c.length === 4 || (c.length === 2 && j - i === 2)) && isDayMonth(Number(a), Number(b));
}

const YEAR = /^(?:19|20)\d\d$/;

function isDateSeparator(gap: string): boolean {
  return gap === '-' || gap === '/' || gap === '.' || gap === '\u2013';
}

function isMonth(digits: string): boolean {
  return digits.length <= 2 && Number(digits) >= 1 && Number(digits) <= 12;
}

/**
 * Shapes of other numbers: years and months (2011-2024, 2019-09/2020-12), a range of round numbers (1000-1200), a
 * dotted quad (an address or a netmask), a dotted number with a one-digit part (a version), the 3-2-4 of a US social
 * security number.
 */
function isOtherShape(groups: readonly DigitGroup[], i: number, j: number): boolean {
  const n = j - i + 1;
  // A year whose neighbours, joined by - / . or an en dash, are all months or years.
  for (let k = i; k <= j; k++) {
    if (!YEAR.test(groups[k].digits)) continue;
    const left = k > i && isDateSeparator(groups[k].gapBefore) ? groups[k - 1].digits : undefined;
    const right = k < j && isDateSeparator(groups[k + 1].gapBefore) ? groups[k + 1].digits : undefined;
    if (left === undefined && right === undefined) continue;
    const dateLike = (d: string | undefined) => d === undefined || isMonth(d) || YEAR.test(d);
    if (dateLike(left) && dateLike(right)) return true;
  }
  if (n === 2 && (groups[j].gapBefore === '-' || groups[j].gapBefore === '\u2013') && groups[i].digits.endsWith('00') && groups[j].digits.endsWith('00')) return true;
  // A dotted quad inside ("81.2.69.142/24"): an address with its prefix length.
  for (let k = i; k + 3 <= j; k++) {
    let quad = true;
    for (let q = k; q <= k + 3; q++) if (groups[q].digits.length > 3 || (q > k && groups[q].gapBefore !== '.')) quad = false;
    if (quad) return true;
  }
  let dotted = n > 1;
  let lone = false;
  for (let k = i + 1; k <= j; k++) if (groups[k].gapBefore !== '.') dotted = false;
  for (let k = i; k <= j; k++) if (groups[k].digits.length === 1) lone = true;
  if (dotted && (lone || (n === 4 && groups.slice(i, j + 1).every((g) => g.digits.length <= 3)))) return true;
  return n === 3 && groups[i + 1].gapBefore === '-' && groups[i + 2].gapBefore === '-' && groups[i].digits.length === 3 && groups[i + 1].digits.length === 2 && groups[j].digits.length === 4;
}

/** Placeholders: one digit repeated, a run of consecutive digits (1234567890), powers of ten and one less. */
function isPlaceholderNumber(digits: string): boolean {
  return /^(\d)\1+$|^10+$/.test(digits) || '01234567890'.includes(digits) || '9876543210'.includes(digits);
}

/**
 * Numbers of machines and quantities, written as one run: powers of two and one less (2147483647), Unix times in s or
 * ms, round numbers (43200000 ms is 12 hours).
 */
function isMachineNumber(digits: string): boolean {
  if ((digits.length === 10 || digits.length === 13) && digits[0] === '1') return true;
  if (digits.endsWith('0000')) return true;
  const n = BigInt(digits);
  return (n & (n - 1n)) === 0n || ((n + 1n) & n) === 0n;
}

function isValidIn(raw: string, region?: CountryCode): boolean {
  const parsed = parsePhoneNumberFromString(raw, region);
  return parsed !== undefined && parsed.isValid();
}

function singleDigitGroups(groups: readonly DigitGroup[], from: number, to: number): number {
  let count = 0;
  for (let k = from; k <= to; k++) if (groups[k].digits.length === 1) count++;
  return count;
}

/** The candidate is the middle of a longer run written the same way ("9400 1000 0000 0000 0000"): part of another number. */
function continuesRun(groups: readonly DigitGroup[], i: number, j: number): boolean {
  const inner = j > i ? groups[j].gapBefore : undefined;
  if (inner === undefined) return false;
  return (i > 0 && groups[i].gapBefore === inner) || (j + 1 < groups.length && groups[j + 1].gapBefore === inner);
}

function isPhoneCandidate(text: string, ctx: NumberContext, groups: readonly DigitGroup[], i: number, j: number, digits: string): boolean {
  const first = groups[i];
  const start = first.leadStart;
  const end = groups[j].end;
  // Inside a chain the gap decides; at its ends, the neighbouring characters.
  if (i > 0 ? !isNumberBreak(first.gapBefore) : gluedBefore(text, start)) return false;
  const last = j === groups.length - 1;
  if (last ? gluedAfter(text, end) : !isNumberBreak(groups[j + 1].gapBefore)) return false;
  const nd = digits.length;
  const lone = singleDigitGroups(groups, i, j);
  const raw = text.slice(start, end);
  // International formats (+CC, 00CC) are phone numbers wherever they stand, code and logs included.
  if (first.international) {
    if (nd < 8 || nd > 16) return false;
    // Country code and a trunk "(0)" may be single digits; more than one other lone digit is not a number format.
    const otherLone = singleDigitGroups(groups, i + 1, j) - (raw.includes('(0)') ? 1 : 0);
    return otherLone <= 1 && isValidIn(raw);
  }
  if (lone > 1 || nd > 15 || continuesRun(groups, i, j) || isPlaceholderNumber(digits)) return false;
  // National formats: a phone label makes any valid number a phone. Without one, a bare run of digits needs eight to
  // twelve and must not be a number of machines, and code, logs and tables hold values, not phone numbers.
  const labelled = ctx.labelled(start);
  if (!labelled && i === j && !digits.startsWith('00') && (nd < 8 || nd > 12 || isMachineNumber(digits))) return false;
  if (!labelled && ctx.amongNumbers(start, end)) return false;
  if (isDateLike(groups, i, j) || isOtherShape(groups, i, j) || ctx.notAPhone(start, end) || ctx.inUrl(start)) return false;
  // International call prefix 00 (most of Europe, Africa and Asia).
  if (digits.startsWith('00') && nd >= 10 && isValidIn(raw, 'DE')) return true;
  if (!labelled && ctx.inCode(start, end)) return false;
  return isNationalNumberSomewhere(digits);
}

/** A chain that starts inside a word ("DE89 3704 0044 …", "A1 …") is a code of letters and digits. */
function startsInWord(text: string, lead: number): boolean {
  return lead > 0 && isLatinLetter(text.charCodeAt(lead - 1));
}

/** Tries the longest candidate at each group first, so "+44 20 7946 0958" is one number, not three. */
function findInChain(text: string, ctx: NumberContext, groups: DigitGroup[], out: PiiMatch[]): void {
  if (startsInWord(text, groups[0].leadStart)) return;
  const n = groups.length;
  let i = 0;
  while (i < n) {
    let jMax = i;
    let count = groups[i].digits.length;
    while (jMax + 1 < n && jMax - i < 8 && count + groups[jMax + 1].digits.length <= 17) {
      jMax++;
      count += groups[jMax].digits.length;
    }
    let matchedTo = -1;
    for (let j = jMax; j >= i; j--) {
      if (count >= 7 && isPhoneCandidate(text, ctx, groups, i, j, joinDigits(groups, i, j))) {
        out.push({ type: 'phone', start: groups[i].leadStart, end: groups[j].end });
        matchedTo = j;
        break;
      }
      count -= groups[j].digits.length;
    }
    i = matchedTo >= 0 ? matchedTo + 1 : i + 1;
  }
}

function joinDigits(groups: readonly DigitGroup[], i: number, j: number): string {
  let s = '';
  for (let k = i; k <= j; k++) s += groups[k].digits;
  return s;
}

export const phoneDetector: PiiDetector = {
  type: 'phone',
  find(text, out) {
    if (!MAYBE_PHONE.test(text)) return;
    const chains: DigitGroup[][] = [];
    const numbers: number[] = [];
    // Only chains of seven digits or more that do not start inside a word can hold a number (see findInChain); every
    // chain's numbers count as neighbours all the same.
    forEachDigitChain(text, (groups) => chains.push(groups), (lead, digits) => digits >= 7 && !startsInWord(text, lead), numbers);
    const ctx = new NumberContext(text, numbers);
    for (const groups of chains) findInChain(text, ctx, groups, out);
  },
};
