import type { PiiType } from '../../contract/policies.js';
import type { PiiMatch } from './pii-match.js';

/** When two matches of equal length overlap, the more specific type wins. */
const PRIORITY: Readonly<Record<PiiType, number>> = {
  secret: 7,
  credit_card: 6,
  iban: 5,
  ssn: 4,
  email: 3,
  ip_address: 2,
  phone: 1,
};

function beats(a: PiiMatch, b: PiiMatch): boolean {
  const la = a.end - a.start;
  const lb = b.end - b.start;
  return la !== lb ? la > lb : PRIORITY[a.type] > PRIORITY[b.type];
}

/**
 * Sorted, non-overlapping matches: a sweep in start order keeps the longer (then more specific) of two overlapping
 * matches. Linear after the sort, so a text with very many matches stays cheap.
 */
export function resolveOverlaps(matches: PiiMatch[]): PiiMatch[] {
  const valid = matches.filter((m) => m.end > m.start);
  valid.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: PiiMatch[] = [];
  for (const m of valid) {
    const last = kept[kept.length - 1];
    if (last === undefined || m.start >= last.end) kept.push(m);
    else if (beats(m, last)) kept[kept.length - 1] = m;
  }
  return kept;
}
