import type { PiiType } from '../../contract/policies.js';

/** One piece of PII found in a text: `start` inclusive, `end` exclusive, in UTF-16 code units. */
export interface PiiMatch {
  type: PiiType;
  start: number;
  end: number;
}

/** Cheap facts about a text, computed in one pass, that let detectors skip texts they cannot match. */
export interface TextProfile {
  readonly digits: number;
  readonly hasAt: boolean;
  readonly hasColon: boolean;
  readonly hasDot: boolean;
  readonly hasDash: boolean;
}

export interface PiiDetector {
  readonly type: PiiType;
  /** False when the text cannot hold a match, so the detector is not run at all. */
  applies(profile: TextProfile): boolean;
  /** Appends candidate matches (they may overlap; overlaps are resolved later). */
  find(text: string, out: PiiMatch[]): void;
}
