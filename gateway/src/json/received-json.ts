// A JSON request body as it arrived: its bytes beside the value parsed from them. Work that depends on one part of the
// body only (a message of a conversation, a tool list) is looked up by the digest of that part's bytes, and a body no
// check edited goes upstream as received, with a few top-level members replaced, instead of being serialised again.
import { hash } from 'node:crypto';
import { type KnownMember, knownMemberAt, memberSighted } from './known-members.js';
import { stringifyBody } from './stringify.js';

/** Byte offsets of a JSON value in the received bytes: `start` inclusive, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
}

interface Member {
  /** The key as received, quotes included. */
  key: Span;
  value: Span;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

export function skipSpace(b: Buffer, i: number): number {
  while (isSpace(b[i])) i++;
  return i;
}

/** The index after the string whose opening quote is at `i`, or -1. Strings are most of a body: indexOf skips them. */
function skipString(b: Buffer, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q === -1) return -1;
    let k = q - 1;
    while (k > i && b[k] === BACKSLASH) k--;
    // An even number of backslashes before the quote: it closes the string.
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** The index after the value that starts at `i` (not whitespace), or -1. */
function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < b.length; ) {
      const d = b[j]!;
      if (d === QUOTE) {
        j = skipString(b, j);
        if (j === -1) return -1;
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
      j++;
    }
    return -1;
  }
  // A number, true, false or null.
  let j = i;
  while (j < b.length) {
    const d = b[j];
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    j++;
  }
  return j > i ? j : -1;
}

function hasControl(key: Buffer): boolean {
  for (let k = 0; k < key.length; k++) if (key[k]! < 0x20) return true;
  return false;
}

/** Member maps of objects that repeat a key: the earlier values are in no span, and only JSON.parse reads them. */
const repeated = new WeakSet<Map<string, Member>>();

/**
 * The members of the object at `i` (last one wins, as JSON.parse has it), or null when the bytes hold no object there.
 * `known` gives the end of a value it recognises at `start` (-1 when it does not), which spares scanning it.
 */
function scanObject(b: Buffer, i: number, known: (name: string, start: number) => number): Map<string, Member> | null {
  if (b[i] !== OPEN_BRACE) return null;
  const members = new Map<string, Member>();
  i = skipSpace(b, i + 1);
  if (b[i] === CLOSE_BRACE) return skipSpace(b, i + 1) === b.length ? members : null;
  for (;;) {
    if (b[i] !== QUOTE) return null;
    const keyEnd = skipString(b, i);
    if (keyEnd === -1) return null;
    const keyBytes = b.subarray(i + 1, keyEnd - 1);
    // A control character must be escaped in JSON: such a key is no JSON, left for JSON.parse to refuse.
    if (hasControl(keyBytes)) return null;
    // A key with escapes is decoded as JSON decodes it.
    const escaped = keyBytes.includes(BACKSLASH);
    const name = escaped ? (JSON.parse(b.toString('utf8', i, keyEnd)) as string) : b.toString('utf8', i + 1, keyEnd - 1);
    const colon = skipSpace(b, keyEnd);
    if (b[colon] !== COLON) return null;
    const start = skipSpace(b, colon + 1);
    let end = known(name, start);
    if (end === -1) end = skipValue(b, start);
    if (end === -1) return null;
    // Map.set keeps the first position of a repeated key: its last value wins, where JSON.parse puts it.
    if (members.has(name)) repeated.add(members);
    members.set(name, { key: { start: i, end: keyEnd }, value: { start, end } });
    i = skipSpace(b, end);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1);
      continue;
    }
    if (b[i] !== CLOSE_BRACE) return null;
    return skipSpace(b, i + 1) === b.length ? members : null;
  }
}

/** The spans of the elements of the array in `span`, or null. */
function scanArray(b: Buffer, span: Span): Span[] | null {
  if (b[span.start] !== OPEN_BRACKET) return null;
  const out: Span[] = [];
  let i = skipSpace(b, span.start + 1);
  if (b[i] === CLOSE_BRACKET) return i + 1 === span.end ? out : null;
  for (;;) {
    const end = skipValue(b, i);
    if (end === -1) return null;
    out.push({ start: i, end });
    i = skipSpace(b, end);
    if (b[i] === COMMA) {
      i = skipSpace(b, i + 1);
      continue;
    }
    return b[i] === CLOSE_BRACKET && i + 1 === span.end ? out : null;
  }
}

const BOM = [0xef, 0xbb, 0xbf] as const;

const received = new WeakMap<object, ReceivedJson>();

/**
 * The received body whose parsed value is `value` itself, or undefined: a copy (a check's redaction, a clamped limit, a
 * conversation expanded with stored turns) has none, so whatever reads the bytes reads exactly what it would compute.
 */
export function receivedJsonOf(value: object): ReceivedJson | undefined {
  return received.get(value);
}

/**
 * A JSON object body and its bytes. The parsed value must stay as parsed (checks edit copies), which is what makes the
 * bytes stand for it: a digest of a member's bytes identifies the member's value.
 */
export class ReceivedJson {
  private scanned: Map<string, Member> | null | undefined;
  private readonly arrays = new Map<string, Span[] | null>();
  private readonly digests = new Map<string, string[] | null>();
  private readonly memberDigests = new Map<string, string | null>();
  private readonly start: number;
  /** Members whose bytes are those of a known member (see known-members.ts), by name, with where they start. */
  private readonly known = new Map<string, { member: KnownMember; start: number }>();

  /** `value` parsed from `bytes`, registered with them. */
  static of(bytes: Buffer, value: Record<string, unknown>): ReceivedJson {
    const r = new ReceivedJson(bytes);
    r.bind(value);
    return r;
  }

  /** The bytes of an object, scanned before any of it is parsed (bind its value next), or null when they hold no object. */
  static scan(bytes: Buffer): ReceivedJson | null {
    const r = new ReceivedJson(bytes);
    return r.members() === null ? null : r;
  }

  private constructor(readonly bytes: Buffer) {
    this.start = bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2] ? 3 : 0;
  }

  private readonly recognise = (name: string, start: number): number => {
    const member = knownMemberAt(name, this.bytes, start);
    // A repeated key: the last value is the member's.
    if (member === undefined) {
      this.known.delete(name);
      return -1;
    }
    this.known.set(name, { member, start });
    return start + member.bytes.length;
  };

  /** Registers the value parsed from the bytes (see receivedJsonOf). */
  bind(value: Record<string, unknown>): void {
    received.set(value, this);
  }

  /** The top-level members, or null when the bytes are not laid out as expected (the caller then computes afresh). */
  private members(): Map<string, Member> | null {
    if (this.scanned === undefined) this.scanned = scanObject(this.bytes, skipSpace(this.bytes, this.start), this.recognise);
    return this.scanned;
  }

  /** Whether a top-level key is repeated (its earlier values are in no span). */
  repeatsKey(): boolean {
    const members = this.members();
    return members !== null && repeated.has(members);
  }

  /** Each top-level member's name and the span of its value, in the order JSON.parse gives them (the last value of a repeated key). */
  *memberSpans(): Generator<[string, Span]> {
    for (const [name, m] of this.members() ?? []) yield [name, m.value];
  }

  /** The bytes of the top-level member `key`'s value, or null when absent. */
  memberSpan(key: string): Span | null {
    return this.members()?.get(key)?.value ?? null;
  }

  /**
   * A digest of the top-level member `key`'s value (computed once per request), or null when absent: of its bytes, or
   * for an array, of its elements' digests (so an array's digest and its elements' are computed from one reading).
   */
  memberDigest(key: string): string | null {
    let digest = this.memberDigests.get(key);
    if (digest === undefined) {
      digest = this.known.get(key)?.member.digest;
      if (digest === undefined) {
        const span = this.memberSpan(key);
        const elements = span === null ? null : this.elements(key);
        const digests = elements === null ? null : this.elementDigests(key);
        digest = span === null ? null : digests === null ? digestOf(this.bytes, span) : digestOfDigests(digests);
        if (digest !== null) memberSighted(key, this.bytes, span!, digest, elements, digests);
      }
      this.memberDigests.set(key, digest);
    }
    return digest;
  }

  /**
   * Spans of the elements of the top-level array `key`, one per element of the parsed array, or null. (The bytes hold
   * no reference to the value: one would keep every parsed body alive through the registry's weak map until a full
   * collection, a third more CPU to parse a large body.)
   */
  elements(key: string): readonly Span[] | null {
    let spans = this.arrays.get(key);
    if (spans === undefined) {
      const known = this.known.get(key);
      const span = this.memberSpan(key);
      spans =
        known?.member.elements != null
          ? known.member.elements.map((s) => ({ start: s.start + known.start, end: s.end + known.start }))
          : span === null
            ? null
            : scanArray(this.bytes, span);
      this.arrays.set(key, spans);
    }
    return spans;
  }

  /** Digests of the bytes of each element of the top-level array `key` (computed once per request), or null. */
  elementDigests(key: string): readonly string[] | null {
    let digests = this.digests.get(key);
    if (digests === undefined) {
      const known = this.known.get(key)?.member.elementDigests;
      const spans = this.elements(key);
      digests = spans === null ? null : known != null && known.length === spans.length ? [...known] : spans.map((s) => digestOf(this.bytes, s));
      this.digests.set(key, digests);
    }
    return digests;
  }

  /**
   * The body with top-level members replaced (a value), removed (undefined) or added at the end; every other member's
   * bytes as received. Null when the bytes are not laid out as expected: the caller serialises the value instead.
   */
  withMembers(edits: Record<string, unknown>): Buffer | null {
    const members = this.members();
    if (members === null) return null;
    const b = this.bytes;
    const parts: Buffer[] = [];
    let first = true;
    const put = (key: Buffer, value: Buffer) => {
      parts.push(first ? OPEN : COMMA_BUF, key, COLON_BUF, value);
      first = false;
    };
    for (const [name, m] of members) {
      if (!Object.hasOwn(edits, name)) {
        put(b.subarray(m.key.start, m.key.end), b.subarray(m.value.start, m.value.end));
        continue;
      }
      const v = edits[name];
      if (v !== undefined) put(b.subarray(m.key.start, m.key.end), Buffer.from(JSON.stringify(v)));
    }
    for (const name of Object.keys(edits)) {
      const v = edits[name];
      if (!members.has(name) && v !== undefined) put(Buffer.from(JSON.stringify(name)), Buffer.from(JSON.stringify(v)));
    }
    parts.push(first ? EMPTY_OBJECT : CLOSE);
    return Buffer.concat(parts);
  }
}

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const EMPTY_OBJECT = Buffer.from('{}');
const COMMA_BUF = Buffer.from(',');
const COLON_BUF = Buffer.from(':');

/**
 * The SHA-256 of a span's bytes, one character per byte (a 32-character string): content addresses that no one can make
 * collide, at about 1.5 GB/s.
 */
function digestOf(b: Buffer, s: Span): string {
  return hash('sha256', b.subarray(s.start, s.end), 'binary');
}

/** The digest of an array by its elements' digests: the same elements give the same digest, whatever the whitespace between them. */
function digestOfDigests(digests: readonly string[]): string {
  return hash('sha256', `elements\n${digests.join('')}`, 'binary');
}

/**
 * `body` with top-level members replaced, removed (undefined) or added, as bytes to send: the received bytes when the
 * body is the one received (nothing edited it), else its serialisation. Both parse to the same value.
 */
export function withMembers(body: object, edits: Record<string, unknown>): Buffer {
  const raw = receivedJsonOf(body)?.withMembers(edits);
  if (raw) return raw;
  const out: Record<string, unknown> = { ...body };
  for (const k in edits) {
    if (edits[k] === undefined) delete out[k];
    else out[k] = edits[k];
  }
  return stringifyBody(out);
}
