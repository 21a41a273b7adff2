import type { PiiType } from '../../contract/policies.js';
import { emailDetector } from './detectors/email.js';
import { ibanDetector } from './detectors/iban.js';
import { foldText } from './fold-text.js';
import { ipAddressDetector } from './detectors/ip-address.js';
import { paymentCardDetector } from './detectors/payment-card.js';
import { phoneDetector } from './detectors/phone.js';
import { secretDetector } from './detectors/secret.js';
import { ssnDetector } from './detectors/ssn.js';
import { ALLOW_NOTHING, type PiiAllow } from './pii-allow.js';
import type { PiiDetector, PiiMatch } from './pii-match.js';
import { resolveOverlaps } from './resolve-overlaps.js';

const DETECTORS: readonly PiiDetector[] = [
  secretDetector,
  paymentCardDetector,
  ibanDetector,
  ssnDetector,
  emailDetector,
  ipAddressDetector,
  phoneDetector,
];

/**
 * Finds PII of the given types in a text. Matches are sorted by start and never overlap: where two candidates
 * overlap, the longer one wins, then the more specific type. Matches whose text `allow` allows (rules.pii_allow) are
 * dropped after that, so an allowed value hides no part of itself.
 */
export function detectPii(text: string, types: readonly PiiType[], allow: PiiAllow = ALLOW_NOTHING): PiiMatch[] {
  if (typeof text !== 'string' || text.length < 4 || types.length === 0) return [];
  // Read as a reader sees it (zero-width characters out, full-width and other forms of ASCII as ASCII); matches are
  // given back in the text's own coordinates, spanning whatever the reader did not see inside them.
  const folded = foldText(text);
  if (folded === undefined) return detectIn(text, types, allow);
  const matches = detectIn(folded.text, types, allow);
  for (const m of matches) {
    m.start = folded.startOf[m.start]!;
    m.end = folded.endOf[m.end - 1]!;
  }
  return matches;
}

function detectIn(text: string, types: readonly PiiType[], allow: PiiAllow): PiiMatch[] {
  const found: PiiMatch[] = [];
  for (const detector of DETECTORS) {
    if (types.includes(detector.type)) detector.find(text, found);
  }
  const matches = found.length <= 1 ? found : resolveOverlaps(found);
  return allow === ALLOW_NOTHING ? matches : matches.filter((m) => !allow.allows(text.slice(m.start, m.end)));
}
