import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import type { PiiMatch } from './pii-match.js';

export function redactionMarker(type: PiiType): string {
  return `[REDACTED:${type.toUpperCase()}]`;
}

/** The distinct types of some matches, in the contract's order. */
export function typesOf(matches: readonly PiiMatch[]): PiiType[] {
  const seen = new Set<PiiType>(matches.map((m) => m.type));
  return PII_TYPES.filter((t) => seen.has(t));
}

/** Replaces sorted, non-overlapping matches with their markers. */
export function applyRedactions(text: string, matches: readonly PiiMatch[]): string {
  if (matches.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const m of matches) {
    parts.push(text.slice(at, m.start), redactionMarker(m.type));
    at = m.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** Replaces each match with `[REDACTED:<TYPE>]`; `types` lists the types replaced, in the contract's order. */
export function redactPii(text: string, types: readonly PiiType[]): { text: string; types: PiiType[] } {
  const matches = detectPii(text, types);
  return { text: applyRedactions(text, matches), types: typesOf(matches) };
}
