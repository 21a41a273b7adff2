import { PII_TYPES, type PiiType } from '../../contract/policies.js';
import { Generations } from '../../json/generations.js';
import { ofMember, partsLookedUp, perElement } from '../../json/part-cache.js';
import { receivedJsonOf } from '../../json/received-json.js';
import { ALLOW_NOTHING, type PiiAllow } from './pii-allow.js';
import type { PiiMatch } from './pii-match.js';
import { typesOf } from './redact-pii.js';
import { EVERY_PART, type PiiScope, type TextVisitor, visitRequestTexts } from './request-texts.js';
import { LONG_JOB_CHARS, scanPool } from './scan-pool.js';
import { type TextKind, type TextVerdict, kindOf, listsOfAllow, processText } from './scan-text.js';

/** Walks the texts of a request body of some dialect (chat completions and embeddings by default) in the parts of `scope`. */
export type TextWalker = (body: Record<string, unknown>, visit: TextVisitor, scope: PiiScope) => void;

const walkChat: TextWalker = (body, visit, scope) => visitRequestTexts(body, visit, scope);

/**
 * Texts shorter than this are scanned every time: the detectors return at once below 4 characters, and a few more cost
 * about what looking them up does. Longer ones are remembered, short ones too: a key or id of a few dozen characters with
 * digits in it (`clear_thinking_20251015`, a UUID) costs the detectors microseconds, the look-up a fraction of one.
 */
const REMEMBER_FROM_CHARS = 8;
/** The characters of clean texts remembered per set of settings (at most twice this: see Generations), each text counted with ENTRY_CHARS more. */
const REMEMBERED_CHARS = 1 << 19;
/** What an entry costs besides its characters (the set's own memory), in characters: many short texts are no free lunch. */
const ENTRY_CHARS = 32;
/** Sets of settings remembered at once; past it, the memory starts over (policies seldom differ in PII settings). */
const MAX_SETTINGS = 8;

/**
 * Texts already scanned and found clean, per set of PII types and allow-list. An agent sends its whole conversation
 * again at every step, so most of a request is text an earlier step already scanned; it is looked up, not scanned again.
 * The least recently seen go first (see Generations), so one-off texts never push out the conversations in flight.
 */
class CleanTexts {
  private readonly bySettings = new Map<string, Generations<number>>();
  /** The canonical key of each type list seen (the same list object comes back for the same policies). */
  private readonly keys = new WeakMap<readonly PiiType[], string>();

  private textsFor(types: readonly PiiType[], allow: PiiAllow): Generations<number> {
    let key = this.keys.get(types);
    if (key === undefined) {
      key = [...types].sort().join(',');
      this.keys.set(types, key);
    }
    if (allow.key !== '') key = `${key}\n${allow.key}`;
    let texts = this.bySettings.get(key);
    if (!texts) {
      if (this.bySettings.size >= MAX_SETTINGS) this.bySettings.clear();
      this.bySettings.set(key, (texts = new Generations<number>(REMEMBERED_CHARS, (chars) => chars + ENTRY_CHARS)));
    }
    return texts;
  }

  has(types: readonly PiiType[], allow: PiiAllow, text: string): boolean {
    return text.length >= REMEMBER_FROM_CHARS && this.textsFor(types, allow).get(text) !== undefined;
  }

  add(types: readonly PiiType[], allow: PiiAllow, text: string): void {
    if (text.length < REMEMBER_FROM_CHARS || text.length > REMEMBERED_CHARS / 4) return;
    this.textsFor(types, allow).set(text, text.length);
  }
}

const cleanTexts = new CleanTexts();

/**
 * Fresh text (text not known clean) of at most this many characters in all is scanned on the main thread: the densest
 * digits cost about 1 µs a character, so that stays well inside 50 ms; more goes to the scan workers (scan-pool.ts).
 */
export const SYNC_SCAN_CHARS = 32 * 1024;
/** Texts sent to a worker together, up to this many characters (a longer text goes alone, as a long job). */
const JOB_CHARS = LONG_JOB_CHARS;

/** The text the policy reads in a request is past the byte budget (limits.pii_scan_bytes): it is refused, not scanned. */
export class ScanBudgetExceeded extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`the request holds ${bytes} bytes of text for PII rules to read, more than the ${limit} allowed`);
  }
}

/** A text the scan must read: not known clean. */
interface FreshText {
  text: string;
  kind: TextKind;
}

/** What one walk of a part of a body holds: the length of every text read, and the texts still to scan. */
interface Walked {
  chars: number;
  fresh: FreshText[];
}

function walkPart(part: Record<string, unknown>, types: readonly PiiType[], walk: TextWalker, scope: PiiScope, allow: PiiAllow): Walked {
  const fresh: FreshText[] = [];
  let chars = 0;
  walk(
    part,
    (text, field) => {
      chars += text.length;
      const kind = kindOf(field);
      if (kind === 'json' || !cleanTexts.has(types, allow, text)) fresh.push({ text, kind });
      return undefined;
    },
    scope,
  );
  return { chars, fresh };
}

/** The UTF-8 bytes of every text a walk of `part` reads (worked out only for a body near the budget). */
function textBytes(part: Record<string, unknown>, walk: TextWalker, scope: PiiScope): number {
  let bytes = 0;
  walk(
    part,
    (text) => {
      bytes += Buffer.byteLength(text, 'utf8');
      return undefined;
    },
    scope,
  );
  return bytes;
}

/** Scans fresh texts on this thread, remembering those found clean. */
function scanHere(fresh: readonly FreshText[], types: readonly PiiType[], allow: PiiAllow): PiiType[] {
  const found: PiiMatch[] = [];
  for (const { text, kind } of fresh) {
    const before = found.length;
    processText(text, kind, types, allow, false, found);
    if (kind === 'text' && found.length === before) cleanTexts.add(types, allow, text);
  }
  return typesOf(found);
}

/** The verdicts of `texts` from the scan workers, in jobs of about JOB_CHARS. */
async function verdictsOffThread(
  texts: readonly FreshText[],
  types: readonly PiiType[],
  allowLists: readonly (readonly string[])[],
  redact: boolean,
): Promise<TextVerdict[]> {
  const jobs: Array<Promise<TextVerdict[]>> = [];
  let batch: FreshText[] = [];
  let chars = 0;
  const send = () => {
    if (batch.length === 0) return;
    jobs.push(scanPool().run({ texts: batch.map((t) => t.text), kinds: batch.map((t) => t.kind), types, allow: allowLists, redact }));
    batch = [];
    chars = 0;
  };
  for (const t of texts) {
    if (chars + t.text.length > JOB_CHARS) send();
    batch.push(t);
    chars += t.text.length;
  }
  send();
  return (await Promise.all(jobs)).flat();
}

/** Scans fresh texts in the scan workers, remembering those found clean; the types found in each list of texts. */
async function scanOffThread(lists: readonly (readonly FreshText[])[], types: readonly PiiType[], allow: PiiAllow, allowLists: readonly (readonly string[])[]): Promise<PiiType[][]> {
  const verdicts = await verdictsOffThread(lists.flat(), types, allowLists, false);
  let at = 0;
  return lists.map((fresh) => {
    const seen = new Set<PiiType>();
    for (const { text, kind } of fresh) {
      const verdict = verdicts[at++]!;
      for (const t of verdict.types) seen.add(t);
      if (kind === 'text' && verdict.types.length === 0) cleanTexts.add(types, allow, text);
    }
    return PII_TYPES.filter((t) => seen.has(t));
  });
}

/**
 * What the scan knows of one part of a body (an element of its conversation or tool list) for one set of scan settings,
 * kept with the part's facts (json/part-cache.ts): an agent's next step costs what it added.
 */
interface PartScan {
  /** The UTF-16 length of the texts the policy reads in the part (set once it was walked). */
  chars?: number;
  /** Their UTF-8 bytes, worked out only when a body comes near the byte budget. */
  bytes?: number;
  /** The types found, once scanned. */
  types?: PiiType[];
  /** The scan in flight (another request holding the same part waits for it). */
  running?: Promise<PiiType[]>;
}

/**
 * A part of a body to scan: an element of a conversation or tool list, or a large member of the top level (with what is
 * known of it), or the rest.
 */
interface Part {
  scan: PartScan | undefined;
  member: string | undefined;
  value: Record<string, unknown> | unknown;
  /** True for an element of the array `member`; false for the whole value of `member`. */
  element?: boolean;
}

/** The top-level arrays of a body whose elements are scanned (and remembered) one by one: conversations (Gemini's `contents` too) and tools. */
const PART_MEMBERS: readonly string[] = ['messages', 'input', 'contents', 'tools'];

/**
 * Any other top-level member of at least this many bytes (a system prompt, Codex's instructions) is a part of its own,
 * scanned once and then looked up by its bytes; smaller ones are read with the rest of the body, every time.
 */
const OWN_PART_BYTES = 1024;

const ids = new WeakMap<object, number>();
let lastId = 0;
const idOf = (o: object) => {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, (id = ++lastId));
  return id;
};

/**
 * The parts of `body` a scan reads. For a body as received, each element of its conversation and tool list is one
 * part, looked up by its bytes; the rest of the body is one more. A walker reads an element alone (its role is in it),
 * so a part scanned alone finds what the whole walk finds in it.
 */
function partsOf(body: Record<string, unknown>, types: readonly PiiType[], walk: TextWalker, scope: PiiScope, allow: PiiAllow): Part[] {
  if (!partsLookedUp(body)) return [{ scan: undefined, member: undefined, value: body }];
  // A walker reads an element by the member it is in (a tool in `input` is no tool definition).
  const fact = `pii-part ${idOf(walk)} ${idOf(types)} ${idOf(scope)} ${allow.key}`;
  const parts: Part[] = [];
  let rest: Record<string, unknown> | null = null;
  for (const member of PART_MEMBERS) {
    const elements = body[member];
    if (!Array.isArray(elements)) continue;
    rest ??= { ...body };
    delete rest[member];
    const scans = perElement(body, member, `${fact} ${member}`, (): PartScan => ({}));
    for (let i = 0; i < scans.length; i++) parts.push({ scan: scans[i], member, value: elements[i], element: true });
  }
  for (const [member, span] of receivedJsonOf(body)!.memberSpans()) {
    if (span.end - span.start < OWN_PART_BYTES || PART_MEMBERS.includes(member) || !Object.prototype.hasOwnProperty.call(body, member)) continue;
    rest ??= { ...body };
    delete rest[member];
    parts.push({ scan: ofMember(body, member, `${fact} ${member}`, (): PartScan => ({})), member, value: body[member], element: false });
  }
  parts.push({ scan: undefined, member: undefined, value: rest ?? body });
  return parts;
}

const bodyOf = (part: Part): Record<string, unknown> =>
  part.member === undefined ? (part.value as Record<string, unknown>) : { [part.member]: part.element ? [part.value] : part.value };

/**
 * The PII types found in the texts `walk` visits (a chat completions or embeddings body by default) in the parts of
 * `scope`, leaving out what `allow` allows, in the contract's order, scanned on this thread. For a body as received,
 * each element of its conversation and tool list is scanned once, then looked up by its bytes (json/part-cache.ts).
 */
export function scanRequestPii(
  body: Record<string, unknown>,
  types: readonly PiiType[],
  walk: TextWalker = walkChat,
  scope: PiiScope = EVERY_PART,
  allow: PiiAllow = ALLOW_NOTHING,
): PiiType[] {
  if (types.length === 0) return [];
  const seen = new Set<PiiType>();
  for (const part of partsOf(body, types, walk, scope, allow)) {
    let found = part.scan?.types;
    if (found === undefined) {
      const walked = walkPart(bodyOf(part), types, walk, scope, allow);
      found = scanHere(walked.fresh, types, allow);
      // A part another request is scanning off the thread is left to it.
      if (part.scan && !part.scan.running) Object.assign(part.scan, { chars: walked.chars, types: found });
    }
    for (const t of found) seen.add(t);
  }
  return PII_TYPES.filter((t) => seen.has(t));
}

/**
 * scanRequestPii for a request on its way: never holds the event loop long. Up to SYNC_SCAN_CHARS of fresh text is
 * scanned here, and the types are returned at once; more goes to the scan workers (a promise, the event loop serving
 * other requests meanwhile), as does a part another request is scanning. The text the policy reads, every part counted
 * (parts already scanned too, so the verdict never depends on what this node remembers), may not pass `scanBytes` UTF-8
 * bytes: past it, ScanBudgetExceeded, thrown before any scanning. A failed scan rejects.
 */
export function scanRequestPiiAsync(
  body: Record<string, unknown>,
  types: readonly PiiType[],
  walk: TextWalker = walkChat,
  scope: PiiScope = EVERY_PART,
  allow: PiiAllow = ALLOW_NOTHING,
  scanBytes = Number.POSITIVE_INFINITY,
): PiiType[] | Promise<PiiType[]> {
  if (types.length === 0) return [];
  const parts = partsOf(body, types, walk, scope, allow);
  const seen = new Set<PiiType>();
  let waits: Array<Promise<PiiType[]>> | undefined;
  const toScan: Array<{ scan: PartScan | undefined; walked: Walked }> = [];
  let walkedHere: Map<PartScan, Walked> | undefined;
  let chars = 0;
  let freshChars = 0;
  for (const part of parts) {
    const scan = part.scan;
    if (scan && (scan.types !== undefined || scan.running !== undefined)) {
      chars += scan.chars!;
      if (scan.types !== undefined) for (const t of scan.types) seen.add(t);
      else (waits ??= []).push(scan.running!);
      continue;
    }
    // The same element twice in one body is walked and scanned once, and counted twice.
    const again = scan && walkedHere?.get(scan);
    if (again) {
      chars += again.chars;
      continue;
    }
    const walked = walkPart(bodyOf(part), types, walk, scope, allow);
    if (scan) {
      scan.chars = walked.chars;
      (walkedHere ??= new Map()).set(scan, walked);
    }
    chars += walked.chars;
    for (const f of walked.fresh) freshChars += f.text.length;
    toScan.push({ scan, walked });
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8: the exact count is needed only near the budget.
  if (3 * chars > scanBytes) {
    let bytes = 0;
    for (const part of parts) bytes += part.scan ? (part.scan.bytes ??= textBytes(bodyOf(part), walk, scope)) : textBytes(bodyOf(part), walk, scope);
    if (bytes > scanBytes) throw new ScanBudgetExceeded(bytes, scanBytes);
  }
  const allowLists = freshChars > SYNC_SCAN_CHARS ? listsOfAllow(allow) : undefined;
  if (allowLists === undefined) {
    for (const { scan, walked } of toScan) {
      const found = scanHere(walked.fresh, types, allow);
      if (scan) scan.types = found;
      for (const t of found) seen.add(t);
    }
    if (waits === undefined) return PII_TYPES.filter((t) => seen.has(t));
  } else {
    const run = scanOffThread(
      toScan.map((s) => s.walked.fresh),
      types,
      allow,
      allowLists,
    );
    toScan.forEach(({ scan }, i) => {
      if (!scan) return;
      const running = run.then((all) => all[i]!);
      scan.running = running;
      // Settled here, whoever waits: a failed scan leaves the part unscanned (the next request scans it again).
      running.then(
        (found) => {
          scan.types = found;
          scan.running = undefined;
        },
        () => {
          scan.running = undefined;
        },
      );
    });
    (waits ??= []).push(run.then((all) => all.flat()));
  }
  return Promise.all(waits!).then((all) => {
    for (const found of all) for (const t of found) seen.add(t);
    return PII_TYPES.filter((t) => seen.has(t));
  });
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
  return { body: copy, types: redactHere(copy, types, walk, scope, allow) };
}

function redactHere(copy: Record<string, unknown>, types: readonly PiiType[], walk: TextWalker, scope: PiiScope, allow: PiiAllow): PiiType[] {
  const found: PiiMatch[] = [];
  walk(copy, (text, field) => processText(text, kindOf(field), types, allow, true, found), scope);
  return typesOf(found);
}

/**
 * redactRequestPii for a request on its way: a body with more than SYNC_SCAN_CHARS of text is redacted by the scan
 * workers (the same code, so the same output; a promise), the event loop serving other requests meanwhile; a smaller
 * one here, at once. A failed scan rejects.
 */
export function redactRequestPiiAsync<T extends Record<string, unknown>>(
  body: T,
  types: readonly PiiType[],
  walk: TextWalker = walkChat,
  scope: PiiScope = EVERY_PART,
  allow: PiiAllow = ALLOW_NOTHING,
): { body: T; types: PiiType[] } | Promise<{ body: T; types: PiiType[] }> {
  const copy = structuredClone(body);
  if (types.length === 0) return { body: copy, types: [] };
  // Each distinct text once, by kind (the same string may be JSON text in one place and plain text in another).
  const byKind: Record<TextKind, Map<string, TextVerdict | undefined>> = { text: new Map(), json: new Map() };
  let chars = 0;
  walk(
    copy,
    (text, field) => {
      const texts = byKind[kindOf(field)];
      if (!texts.has(text)) {
        texts.set(text, undefined);
        chars += text.length;
      }
      return undefined;
    },
    scope,
  );
  const allowLists = chars > SYNC_SCAN_CHARS ? listsOfAllow(allow) : undefined;
  if (allowLists === undefined) return { body: copy, types: redactHere(copy, types, walk, scope, allow) };
  const texts: FreshText[] = [];
  for (const kind of ['text', 'json'] as const) for (const text of byKind[kind].keys()) texts.push({ text, kind });
  return verdictsOffThread(texts, types, allowLists, true).then((verdicts) => {
    texts.forEach(({ text, kind }, i) => byKind[kind].set(text, verdicts[i]));
    const seen = new Set<PiiType>();
    const found: PiiMatch[] = [];
    walk(
      copy,
      (text, field) => {
        const kind = kindOf(field);
        const verdict = byKind[kind].get(text);
        // A text the first walk did not meet (a walker that reads differently the second time) is redacted here.
        if (verdict === undefined) return processText(text, kind, types, allow, true, found);
        for (const t of verdict.types) seen.add(t);
        return verdict.text ?? undefined;
      },
      scope,
    );
    for (const t of typesOf(found)) seen.add(t);
    return { body: copy, types: PII_TYPES.filter((t) => seen.has(t)) };
  });
}
