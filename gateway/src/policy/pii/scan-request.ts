import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { partsLookedUp, perElement } from '../../json/part-cache.js';
import { detectPii } from './detect-pii.js';
import { detectPiiLabelled } from './detect-labelled.js';
import { mapJsonStrings } from './json-text.js';
import { ALLOW_NOTHING, type PiiAllow } from './pii-allow.js';
import type { PiiMatch } from './pii-match.js';
import { redactUntilClean, typesOf } from './redact-pii.js';
import { EVERY_PART, type PiiScope, type TextVisitor, visitRequestTexts } from './request-texts.js';

/** Walks the texts of a request body of some dialect (chat completions and embeddings by default) in the parts of `scope`. */
export type TextWalker = (body: Record<string, unknown>, visit: TextVisitor, scope: PiiScope) => void;

const walkChat: TextWalker = (body, visit, scope) => visitRequestTexts(body, visit, scope);

type TextKind = 'text' | 'json';

/** Field names whose string value is JSON text. */
function kindOf(path: string): TextKind {
  return path === 'arguments' ? 'json' : 'text';
}

/** Detects in one text (JSON text decoded when it parses, raw otherwise), collecting matches; returns the text, redacted if asked. */
function processText(text: string, kind: TextKind, types: readonly PiiType[], allow: PiiAllow, redact: boolean, found: PiiMatch[]): string {
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

/** Texts shorter than this are scanned every time: remembering them would cost about what scanning them does. */
const REMEMBER_FROM_CHARS = 64;
/** The characters of clean texts remembered in all; past it, the memory starts over. */
const REMEMBERED_CHARS = 1 << 20;

/**
 * Texts already scanned and found clean, per set of PII types and allow-list, within one budget for the whole process.
 * An agent sends its whole conversation again at every step, so most of a request is text an earlier step already
 * scanned; it is looked up, not scanned again.
 */
class CleanTexts {
  private readonly bySettings = new Map<string, Set<string>>();
  private chars = 0;
  /** The canonical key of each type list seen (the same list object comes back for the same policies). */
  private readonly keys = new WeakMap<readonly PiiType[], string>();

  private textsFor(types: readonly PiiType[], allow: PiiAllow): Set<string> {
    let key = this.keys.get(types);
    if (key === undefined) {
      key = [...types].sort().join(',');
      this.keys.set(types, key);
    }
    if (allow.key !== '') key = `${key}\n${allow.key}`;
    let texts = this.bySettings.get(key);
    if (!texts) this.bySettings.set(key, (texts = new Set()));
    return texts;
  }

  has(types: readonly PiiType[], allow: PiiAllow, text: string): boolean {
    return text.length >= REMEMBER_FROM_CHARS && this.textsFor(types, allow).has(text);
  }

  add(types: readonly PiiType[], allow: PiiAllow, text: string): void {
    if (text.length < REMEMBER_FROM_CHARS || text.length > REMEMBERED_CHARS / 8) return;
    if (this.chars + text.length > REMEMBERED_CHARS) {
      this.bySettings.clear();
      this.chars = 0;
    }
    this.textsFor(types, allow).add(text);
    this.chars += text.length;
  }
}

const cleanTexts = new CleanTexts();

/** The top-level arrays of a body whose elements are scanned (and remembered) one by one: conversations and tools. */
const PART_MEMBERS = ['messages', 'input', 'tools'] as const;

const ids = new WeakMap<object, number>();
let lastId = 0;
const idOf = (o: object) => {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = ++lastId));
  return id;
};

/**
 * The PII types found in the texts `walk` visits (a chat completions or embeddings body by default) in the parts of
 * `scope`, leaving out what `allow` allows, in the contract's order. For a body as received, each element of its
 * conversation and tool list is scanned once, then looked up by its bytes (json/part-cache.ts): an agent's next step
 * costs what it added. A walker reads an element alone (its role is in it), so a part scanned alone finds what the
 * whole walk finds in it.
 */
export function scanRequestPii(
  body: Record<string, unknown>,
  types: readonly PiiType[],
  walk: TextWalker = walkChat,
  scope: PiiScope = EVERY_PART,
  allow: PiiAllow = ALLOW_NOTHING,
): PiiType[] {
  if (types.length === 0) return [];
  if (!partsLookedUp(body)) return scanWhole(body, types, walk, scope, allow);
  // A walker reads an element by the member it is in (a tool in `input` is no tool definition).
  const fact = `pii ${idOf(walk)} ${idOf(types)} ${idOf(scope)} ${allow.key}`;
  const seen = new Set<PiiType>();
  let rest: Record<string, unknown> | null = null;
  for (const member of PART_MEMBERS) {
    if (!Array.isArray(body[member])) continue;
    rest ??= { ...body };
    delete rest[member];
    const perPart = perElement(body, member, `${fact} ${member}`, (element) => scanWhole({ [member]: [element] }, types, walk, scope, allow));
    for (const found of perPart) for (const t of found) seen.add(t);
  }
  for (const t of scanWhole(rest ?? body, types, walk, scope, allow)) seen.add(t);
  return PII_TYPES.filter((t) => seen.has(t));
}

function scanWhole(body: Record<string, unknown>, types: readonly PiiType[], walk: TextWalker, scope: PiiScope, allow: PiiAllow): PiiType[] {
  const found: PiiMatch[] = [];
  walk(body, (text, field) => {
    const kind = kindOf(field);
    if (kind === 'text' && cleanTexts.has(types, allow, text)) return undefined;
    const before = found.length;
    processText(text, kind, types, allow, false, found);
    if (kind === 'text' && found.length === before) cleanTexts.add(types, allow, text);
    return undefined;
  }, scope);
  return typesOf(found);
}

/** A redacted deep copy of a request body (the input is left untouched) and the PII types replaced. */
export function redactRequestPii<T extends Record<string, unknown>>(
  body: T,
  types: readonly PiiType[],
  walk: TextWalker = walkChat,
  scope: PiiScope = EVERY_PART,
  allow: PiiAllow = ALLOW_NOTHING,
): { body: T; types: PiiType[] } {
  const copy = structuredClone(body);
  if (types.length === 0) return { body: copy, types: [] };
  const found: PiiMatch[] = [];
  walk(copy, (text, field) => processText(text, kindOf(field), types, allow, true, found), scope);
  return { body: copy, types: typesOf(found) };
}
