import type { PiiType } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { ALLOW_NOTHING, type PiiAllow } from './pii-allow.js';
import type { PiiMatch } from './pii-match.js';

const MAX_LABEL = 64;

/**
 * Detects PII in a value as if it were written `label: value`, so label-dependent detectors (password assignments,
 * SSN labels, AWS secrets) still see their label. Matches are in the value's coordinates.
 */
export function detectPiiLabelled(value: string, label: string | undefined, types: readonly PiiType[], allow: PiiAllow = ALLOW_NOTHING): PiiMatch[] {
  if (label === undefined || label.length === 0 || label.length > MAX_LABEL) return detectPii(value, types, allow);
  const prefix = `${label}: `;
  const shift = prefix.length;
  const matches: PiiMatch[] = [];
  for (const m of detectPii(prefix + value, types, allow)) {
    if (m.end <= shift) continue;
    matches.push({ type: m.type, start: Math.max(m.start, shift) - shift, end: m.end - shift });
  }
  return matches;
}
