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

/** Texts shorter than this are scanned every time: remembering them would cost about what scanning them does. */
const REMEMBER_FROM_CHARS = 64;
/** The characters of clean texts remembered per type list; past it, the memory starts over. */
const REMEMBERED_CHARS = 1 << 20;

/**
 * Texts already scanned and found clean for one list of PII types. An agent sends its whole conversation again at every
 * step, so most of a request is text an earlier step already scanned; it is looked up, not scanned again.
 */
class CleanTexts {
  private readonly texts = new Set<string>();
  private chars = 0;

  has(text: string): boolean {
    return text.length >= REMEMBER_FROM_CHARS && this.texts.has(text);
  }

  add(text: string): void {
    if (text.length < REMEMBER_FROM_CHARS || text.length > REMEMBERED_CHARS / 8) return;
    if (this.chars + text.length > REMEMBERED_CHARS) {
      this.texts.clear();
      this.chars = 0;
    }
    this.texts.add(text);
    this.chars += text.length;
  }
}

/** Keyed by the type list itself: callers pass the same list for the same policies (see pii-rules.ts). */
const cleanTexts = new WeakMap<readonly PiiType[], CleanTexts>();

/** The PII types found anywhere in a chat completions or embeddings request body, in the contract's order. */
export function scanRequestPii(body: unknown, types: readonly PiiType[]): PiiType[] {
  if (types.length === 0) return [];
  let clean = cleanTexts.get(types);
  if (!clean) cleanTexts.set(types, (clean = new CleanTexts()));
  const found: PiiMatch[] = [];
  visitRequestTexts(body, (text, field) => {
    const kind = kindOf(field);
    if (kind === 'text' && clean.has(text)) return undefined;
    const before = found.length;
    processText(text, kind, types, false, found);
    if (kind === 'text' && found.length === before) clean.add(text);
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
