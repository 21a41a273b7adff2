import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { ALLOW_NOTHING, type PiiAllow } from './pii-allow.js';
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

const MAX_PASSES = 4;

/**
 * Redacts until the output holds nothing more: a match can hide its neighbour ("6789+44 20 …" reads as one glued
 * number until the SSN is replaced). Returns the text and every match replaced, across passes.
 */
export function redactUntilClean(text: string, detect: (text: string) => PiiMatch[]): { text: string; matches: PiiMatch[] } {
  const all: PiiMatch[] = [];
  let current = text;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const matches = detect(current);
    if (matches.length === 0) break;
    all.push(...matches);
    current = applyRedactions(current, matches);
  }
  return { text: current, matches: all };
}

/** Replaces each match with `[REDACTED:<TYPE>]`; `types` lists the types replaced, in the contract's order. */
export function redactPii(text: string, types: readonly PiiType[], allow: PiiAllow = ALLOW_NOTHING): { text: string; types: PiiType[] } {
  if (types.length === 0) return { text, types: [] };
  const { text: redacted, matches } = redactUntilClean(text, (t) => detectPii(t, types, allow));
  return { text: redacted, types: typesOf(matches) };
}
