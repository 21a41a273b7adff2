import type { PiiType } from '../../contract/policies.js';

/** One piece of PII found in a text: `start` inclusive, `end` exclusive, in UTF-16 code units. */
export interface PiiMatch {
  type: PiiType;
  start: number;
  end: number;
}

export interface PiiDetector {
  readonly type: PiiType;
  /**
   * Appends candidate matches (they may overlap; overlaps are resolved later). Each detector first runs a cheap
   * test that rejects most texts, so a prompt without PII costs a few regular-expression scans.
   */
  find(text: string, out: PiiMatch[]): void;
}
