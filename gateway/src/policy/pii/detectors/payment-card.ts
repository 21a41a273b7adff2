import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { isAsciiDigit, isLatinLetter } from './chars.js';
import { luhnValid } from './checksums.js';

interface CardScheme {
  prefix: RegExp;
  lengths: readonly number[];
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Issuer identification ranges of the networks in wide use; a Luhn-valid number outside them is an id, not a card. */
const SCHEMES: readonly CardScheme[] = [
  { prefix: /^4/, lengths: [13, 16, 19] }, // Visa
  { prefix: /^(?:5[1-5]|222[1-9]|22[3-9]\d|2[3-6]\d\d|27[01]\d|2720)/, lengths: [16] }, // Mastercard
  { prefix: /^3[47]/, lengths: [15] }, // American Express
  { prefix: /^(?:6011|64[4-9]|65)/, lengths: range(16, 19) }, // Discover
  { prefix: /^(?:30[0-5]|3095|36|3[89])/, lengths: range(14, 19) }, // Diners Club
  { prefix: /^35(?:2[89]|[3-8]\d)/, lengths: range(16, 19) }, // JCB
  { prefix: /^(?:62|81)/, lengths: range(16, 19) }, // UnionPay (81: its domestic range in China)
  { prefix: /^(?:5018|5020|5038|5893|6304|6759|676[1-3])/, lengths: range(13, 19) }, // Maestro
  { prefix: /^220[0-4]/, lengths: range(16, 19) }, // Mir
];

/** Printed groupings: 4-4-4-4(-3) for most cards, 4-6-5 for Amex, 4-6-4 for Diners. */
const GROUPINGS = new Set(['4,4,4,4', '4,4,4,4,3', '4,6,5', '4,6,4', '4,4,4,1', '4,4,4,2', '4,4,4,3', '4,4,4,4,1', '4,4,4,4,2']);

// Thirteen digits with at most single spaces or dashes between them.
const MAYBE_CARD = /\d(?:[ -]?\d){12}/;

export function isCardNumber(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  if (!SCHEMES.some((s) => s.prefix.test(digits) && s.lengths.includes(digits.length))) return false;
  return luhnValid(digits);
}

function gluedBefore(text: string, i: number): boolean {
  if (i === 0) return false;
  const c = text.charCodeAt(i - 1);
  if (isAsciiDigit(c) || isLatinLetter(c) || c === 95) return true;
  // "-4111..." after a word is part of an identifier; "1.4111..." is part of a number.
  if (c === 45 || c === 46 || c === 47 || c === 44) return i >= 2 && (isAsciiDigit(text.charCodeAt(i - 2)) || isLatinLetter(text.charCodeAt(i - 2)));
  return false;
}

function gluedAfter(text: string, i: number): boolean {
  if (i >= text.length) return false;
  const c = text.charCodeAt(i);
  if (isAsciiDigit(c) || isLatinLetter(c) || c === 95) return true;
  if (c === 45 || c === 46 || c === 47 || c === 44) return i + 1 < text.length && isAsciiDigit(text.charCodeAt(i + 1));
  return false;
}

/**
 * Walks runs of digit groups joined by one separator kind (space or dash). A card is the whole run when it is one
 * unbroken group of 13-19 digits or a known printed grouping, or one unbroken 13-19 digit group of a space-separated run.
 */
function findCards(text: string, out: PiiMatch[]): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!isAsciiDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const starts: number[] = [];
    const ends: number[] = [];
    let sep = -1;
    let j = i;
    for (;;) {
      const groupStart = j;
      while (j < n && isAsciiDigit(text.charCodeAt(j))) j++;
      starts.push(groupStart);
      ends.push(j);
      const c = text.charCodeAt(j);
      if ((c === 32 || c === 45) && (sep === -1 || sep === c) && j + 1 < n && isAsciiDigit(text.charCodeAt(j + 1))) {
        sep = c;
        j++;
        continue;
      }
      break;
    }
    checkRun(text, starts, ends, sep, out);
    i = j;
  }
}

function checkRun(text: string, starts: number[], ends: number[], sep: number, out: PiiMatch[]): void {
  const runStart = starts[0];
  const runEnd = ends[ends.length - 1];
  if (gluedBefore(text, runStart) || gluedAfter(text, runEnd)) return;
  const lengths = starts.map((s, k) => ends[k] - s);
  const total = lengths.reduce((a, b) => a + b, 0);
  if (total >= 13 && total <= 19 && (lengths.length === 1 || GROUPINGS.has(lengths.join(',')))) {
    let digits = '';
    for (let k = 0; k < starts.length; k++) digits += text.slice(starts[k], ends[k]);
    if (isCardNumber(digits)) out.push({ type: 'credit_card', start: runStart, end: runEnd });
    return;
  }
  if (sep !== 32) return;
  for (let k = 0; k < starts.length; k++) {
    if (lengths[k] >= 13 && lengths[k] <= 19 && isCardNumber(text.slice(starts[k], ends[k]))) {
      out.push({ type: 'credit_card', start: starts[k], end: ends[k] });
    }
  }
}

export const paymentCardDetector: PiiDetector = {
  type: 'credit_card',
  find(text, out) {
    if (MAYBE_CARD.test(text)) findCards(text, out);
  },
};
