import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { PiiDetector, PiiMatch } from '../pii-match.js';
import { isAsciiAlnum, isAsciiDigit, isLatinLetter, isWhitespace } from './chars.js';
import { forEachDigitChain, type DigitGroup } from './phone-chains.js';

// Seven digits, consecutive or joined by up to three characters of phone punctuation.
const MAYBE_PHONE = /[0-9\uff10-\uff19](?:[ \u00a0\u202f\u2009\u3000().\/\uff08\uff09\u2010-\u2015\u2212\uff0d\u30fc-]{0,3}[0-9\uff10-\uff19]){6}/;

/** Countries whose national format (trunk prefix 0) is recognised besides the default region, US. */
const NATIONAL_REGIONS: readonly CountryCode[] = ['GB', 'DE', 'FR', 'IN', 'JP'];

/** Group sizes of US numbers as people write them: 415-555-2671, (415) 555 2671, 1-800-555-0199, 4155552671. */
const US_SHAPES = new Set(['10', '3,3,4', '3,7', '1,3,3,4', '1,10', '11', '1,3,7']);

/** Digits right after one of these labels are an id or a quantity, not a phone number. */
const ID_LABEL =
  /(?:\b(?:limit|max|min|size|count|total|amount|balance|timestamp|epoch|ts|offset|seed|pid|uid|port|bytes|order|invoice|inv|ref|reference|tracking|track|shipment|parcel|sku|isbn|issn|ticket|case|account|acct|serial|customer|booking|confirmation|transaction|id|bestellung|bestellnummer|rechnung|rechnungsnummer|auftrag|auftragsnummer|kundennummer|commande|facture|référence|pedido|factura|referencia)|注文番号|伝票番号)(?:\s*(?:no\.?|nr\.?|number|num\.?|nummer|numéro|número|n[°º]|id|#))?\s*[:#.-]?\s*#?\s*$/i;

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
  // # @ $ & / \ % and currency signs: ids, handles, prices, paths.
  if ('#@$&/\\%€£¥'.includes(text[start - 1])) return true;
  if (c === 45 || c === 46 || c === 44) return start >= 2 && isAsciiAlnum(text.charCodeAt(start - 2));
  return false;
}

function gluedAfter(text: string, end: number): boolean {
  if (end >= text.length) return false;
  const c = text.charCodeAt(end);
  if ('%€$£¥°@'.includes(text[end])) return true;
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

function isValidIn(raw: string, region?: CountryCode): boolean {
  const parsed = parsePhoneNumberFromString(raw, region);
  return parsed !== undefined && parsed.isValid();
}

function singleDigitGroups(groups: readonly DigitGroup[], from: number, to: number): number {
  let count = 0;
  for (let k = from; k <= to; k++) if (groups[k].digits.length === 1) count++;
  return count;
}

function isPhoneCandidate(text: string, groups: readonly DigitGroup[], i: number, j: number, digits: string): boolean {
  const first = groups[i];
  const start = first.leadStart;
  const end = groups[j].end;
  // Inside a chain the gap decides; at its ends, the neighbouring characters.
  if (i > 0 ? !isNumberBreak(first.gapBefore) : gluedBefore(text, start)) return false;
  const last = j === groups.length - 1;
  if (last ? gluedAfter(text, end) : !isNumberBreak(groups[j + 1].gapBefore)) return false;
  const nd = digits.length;
  const lone = singleDigitGroups(groups, i, j);
  // Cheap shape tests first: most digit runs in prose and code fail them.
  if (first.international ? nd < 8 || nd > 16 : lone > 1 || nd > 17) return false;
  const raw = text.slice(start, end);
  if (first.international) {
    // Country code and a trunk "(0)" may be single digits; more than one other lone digit is not a number format.
    const otherLone = singleDigitGroups(groups, i + 1, j) - (raw.includes('(0)') ? 1 : 0);
    return otherLone <= 1 && isValidIn(raw);
  }
  if (isDateLike(groups, i, j)) return false;
  if (ID_LABEL.test(text.slice(Math.max(0, start - 40), start))) return false;
  if (digits.startsWith('00')) {
    // International call prefix 00 (most of Europe and India).
    return nd >= 10 && isValidIn(raw, 'DE');
  }
  const shape = groups.slice(i, j + 1).map((g) => g.digits.length).join(',');
  if (digits.startsWith('0')) {
    return nd >= 9 && nd <= 13 && lone === 0 && NATIONAL_REGIONS.some((r) => isValidIn(raw, r));
  }
  if (US_SHAPES.has(shape) && (nd === 10 || digits.startsWith('1'))) return isValidIn(raw, 'US');
  // Indian mobiles are written without the trunk prefix as 98765 43210.
  if (shape === '5,5' && digits.charCodeAt(0) >= 54) return isValidIn(raw, 'IN');
  return false;
}

/** Tries the longest candidate at each group first, so "+44 20 7946 0958" is one number, not three. */
function findInChain(text: string, groups: DigitGroup[], out: PiiMatch[]): void {
  // A chain that starts inside a word ("DE89 3704 0044 …", "A1 …") is a code of letters and digits.
  const lead = groups[0].leadStart;
  if (lead > 0 && isLatinLetter(text.charCodeAt(lead - 1))) return;
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
      if (count >= 7 && isPhoneCandidate(text, groups, i, j, joinDigits(groups, i, j))) {
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
    forEachDigitChain(text, (groups) => {
      let total = 0;
      for (const g of groups) total += g.digits.length;
      if (total >= 7) findInChain(text, groups, out);
    });
  },
};
