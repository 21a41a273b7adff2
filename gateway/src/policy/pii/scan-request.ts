import type { PiiType } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { detectPiiLabelled } from './detect-labelled.js';
import { mapJsonStrings } from './json-text.js';
import type { PiiMatch } from './pii-match.js';
import { redactUntilClean, typesOf } from './redact-pii.js';
import { visitRequestTexts } from './request-texts.js';

type TextKind = 'text' | 'json';

/** Field names whose string value is JSON text. */
function kindOf(path: string): TextKind {
  return path === 'arguments' ? 'json' : 'text';
}

/** Detects in one text (JSON text decoded when it parses, raw otherwise), collecting matches; returns the text, redacted if asked. */
function processText(text: string, kind: TextKind, types: readonly PiiType[], redact: boolean, found: PiiMatch[]): string {
  if (kind === 'json') {
    const mapped = mapJsonStrings(text, (value, label) => detectOrRedact(value, (t) => detectPiiLabelled(t, label, types), redact, found));
    if (mapped !== undefined) return mapped;
  }
  return detectOrRedact(text, (t) => detectPii(t, types), redact, found);
}

/** Collects the matches of one string and returns it redacted if asked; scanning redacts too, so both report the same types. */
function detectOrRedact(text: string, detect: (text: string) => PiiMatch[], redact: boolean, found: PiiMatch[]): string {
  const result = redactUntilClean(text, detect);
  for (const m of result.matches) found.push(m);
  return redact ? result.text : text;
}

/** The PII types found anywhere in a chat completions or embeddings request body, in the contract's order. */
export function scanRequestPii(body: unknown, types: readonly PiiType[]): PiiType[] {
  if (types.length === 0) return [];
  const found: PiiMatch[] = [];
  visitRequestTexts(body, (text, field) => {
    processText(text, kindOf(field), types, false, found);
    return undefined;
  });
  return typesOf(found);
}

/** A redacted deep copy of a request body (the input is left untouched) and the PII types replaced. */
export function redactRequestPii<T>(body: T, types: readonly PiiType[]): { body: T; types: PiiType[] } {
  const copy = structuredClone(body);
  if (types.length === 0) return { body: copy, types: [] };
  const found: PiiMatch[] = [];
  visitRequestTexts(copy, (text, field) => processText(text, kindOf(field), types, true, found));
  return { body: copy, types: typesOf(found) };
}
