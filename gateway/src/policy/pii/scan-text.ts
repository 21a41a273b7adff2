// One text as the PII rules read it, on the main thread or in a scan worker (scan-worker.ts): the same code either way,
// so a text scanned off the main thread is found and redacted exactly as one scanned on it.
import type { PiiType } from '../../contract/policies.js';
import { detectPii } from './detect-pii.js';
import { detectPiiLabelled } from './detect-labelled.js';
import { mapJsonStrings } from './json-text.js';
import { ALLOW_NOTHING, allowedByAll, compileAllow, type PiiAllow } from './pii-allow.js';
import type { PiiMatch } from './pii-match.js';
import { redactUntilClean, typesOf } from './redact-pii.js';

export type TextKind = 'text' | 'json';

/** Field names whose string value is JSON text. */
export function kindOf(field: string): TextKind {
  return field === 'arguments' ? 'json' : 'text';
}

/** Detects in one text (JSON text decoded when it parses, raw otherwise), collecting matches; returns the text, redacted if asked. */
export function processText(text: string, kind: TextKind, types: readonly PiiType[], allow: PiiAllow, redact: boolean, found: PiiMatch[]): string {
  if (kind === 'json') {
    const mapped = mapJsonStrings(text, (value, label) => detectOrRedact(value, (t) => detectPiiLabelled(t, label, types, allow), redact, found));
    if (mapped !== undefined) return mapped;
  }
  return detectOrRedact(text, (t) => detectPii(t, types, allow), redact, found);
}

/** Collects the matches of one string and returns it redacted if asked; scanning redacts too, so both report the same types. */
function detectOrRedact(text: string, detect: (text: string) => PiiMatch[], redact: boolean, found: PiiMatch[]): string {
  const result = redactUntilClean(text, detect);
  for (const m of result.matches) found.push(m);
  return redact ? result.text : text;
}

/** What one text holds: the types found, and the text redacted when asked (null when nothing changed). */
export interface TextVerdict {
  types: PiiType[];
  text: string | null;
}

export function textVerdict(text: string, kind: TextKind, types: readonly PiiType[], allow: PiiAllow, redact: boolean): TextVerdict {
  const found: PiiMatch[] = [];
  const out = processText(text, kind, types, allow, redact, found);
  return { types: typesOf(found), text: redact && out !== text ? out : null };
}

/**
 * An allow-list as the lists of patterns it was made of, so a worker can compile the same one; `allowFromLists` is the
 * way back. Allow-lists made otherwise (compileAllow alone) have no description and are scanned on the main thread.
 */
const described = new WeakMap<PiiAllow, readonly (readonly string[])[]>([[ALLOW_NOTHING, []]]);

/** What every list of `lists` allows (rules.pii_allow of several policies), remembered with its lists. */
export function allowFromLists(lists: readonly (readonly string[])[]): PiiAllow {
  const allow = allowedByAll(lists.map((l) => compileAllow(l)));
  if (!described.has(allow)) described.set(allow, lists);
  return allow;
}

export function listsOfAllow(allow: PiiAllow): readonly (readonly string[])[] | undefined {
  return described.get(allow);
}
