// Received bytes to a JSON value, fast on what agents send: large bodies, mostly ASCII, a few other characters.
import { isAscii } from 'node:buffer';
import secureJson from 'secure-json-parse';
import { MIN_BODY_BYTES } from './part-cache.js';
import { keepPart, keptPart, sentBefore } from './part-values.js';
import { ReceivedJson, type Span, skipSpace } from './received-json.js';
import { repeatsKeyOf } from './repeated-keys.js';

/** Runs of bytes outside ASCII: each one a whole number of UTF-8 sequences (or invalid bytes), never a JSON delimiter. */
const NON_ASCII_RUN = /[\x80-\xff]+/g;

const ESCAPES: string[] = [];
const escapeOf = (unit: number) => (ESCAPES[unit] ??= `\\u${unit.toString(16).padStart(4, '0')}`);

/**
 * The JSON text of `bytes` with every character outside ASCII written as its \u escape (null when that would make the
 * text much longer than the bytes, or the bytes are not JSON that could parse). Decoding UTF-8 past its first non-ASCII
 * byte is slow (a quarter of a millisecond for an agent's 75 KB request with a few hundred such characters); an ASCII
 * string is copied as is, and JSON.parse turns the escapes back into the very characters decoding would have given:
 * outside strings, JSON allows only ASCII, so the escapes make the same syntax errors there.
 */
export function asciiJsonText(bytes: Buffer, latin1 = bytes.toString('latin1')): string | null {
  if (isAscii(bytes)) return latin1;
  const limit = bytes.length + (bytes.length >> 2) + 64;
  let out = '';
  let last = 0;
  NON_ASCII_RUN.lastIndex = 0;
  for (let m = NON_ASCII_RUN.exec(latin1); m !== null; m = NON_ASCII_RUN.exec(latin1)) {
    const start = m.index;
    const end = start + m[0].length;
    // After a backslash, the run would read as an escaped backslash: not JSON, and left to the ordinary path to refuse.
    if (start > 0 && latin1.charCodeAt(start - 1) === 0x5c) return null;
    // The run decoded on its own is what whole decoding makes of it (an ASCII byte ends every UTF-8 sequence, valid or not).
    const text = bytes.toString('utf8', start, end);
    let escaped = '';
    for (let i = 0; i < text.length; i++) escaped += escapeOf(text.charCodeAt(i));
    out += latin1.slice(last, start) + escaped;
    last = end;
    if (out.length > limit) return null;
  }
  return out + latin1.slice(last);
}

/** Bodies up to this size are parsed as text and not registered with their bytes. */
const SMALL_BODY_BYTES = 2_048;

/** What a `__proto__` or `constructor` key needs, plainly or with \u escapes (one scan instead of three). */
const MAY_HOLD_PROTOTYPE_KEYS = /__proto__|constructor|\\u/;

/** JSON.parse with the guard: a `__proto__` or `constructor` key is a SyntaxError. */
const guardedParse = (text: string): unknown => secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });

/** The JSON text of bytes that are not all ASCII, decoded as parts. */
function textOf(bytes: Buffer, latin1: string): string {
  return asciiJsonText(bytes, latin1) ?? bytes.toString('utf8');
}

/** A part that repeats a key: the body is parsed whole instead, and not registered with its bytes. */
class RepeatedKey extends Error {}

/** One part of a body (a member's value, an element of an array), parsed with the guard; RepeatedKey when it repeats a key. */
function parsePart(bytes: Buffer): unknown {
  const latin1 = bytes.toString('latin1');
  const guarded = MAY_HOLD_PROTOTYPE_KEYS.test(latin1);
  const text = guarded ? bytes.toString('utf8') : textOf(bytes, latin1);
  const value: unknown = guarded ? guardedParse(text) : JSON.parse(text);
  if (repeatsKeyOf(text, value)) throw new RepeatedKey();
  return value;
}

/** The top-level arrays whose elements are kept one by one: an agent's conversation grows by elements, and tools come and go. */
const KEPT_BY_ELEMENT = new Set(['messages', 'input', 'contents', 'tools']);
const CONVERSATION = new Set(['messages', 'input', 'contents']);

/** Other members are kept whole from this size (a system prompt, instructions); smaller ones are parsed each time. */
const KEPT_MEMBER_BYTES = 1_024;

/** A top-level member as the body is parsed: a kept array's elements, a kept member, or one parsed each time. */
type Planned =
  | { name: string; span: Span; spans: readonly Span[]; digests: readonly string[]; kept: unknown[] }
  | { name: string; span: Span; digest: string; kept: unknown }
  | { name: string; span: Span };

/**
 * How the body `raw` holds is parsed: each member, with what is kept of it (undefined where a part is new), and the
 * bytes that are new. Null when a top-level key is one the guard refuses, or repeated (its earlier values must be
 * valid JSON too, which only parsing them whole tells).
 */
function plan(raw: ReceivedJson): { members: Planned[]; newBytes: number } | null {
  if (raw.repeatsKey()) return null;
  const members: Planned[] = [];
  let newBytes = 0;
  for (const [name, span] of raw.memberSpans()) {
    if (name === '__proto__' || name === 'constructor') return null;
    const spans = KEPT_BY_ELEMENT.has(name) ? raw.elements(name) : null;
    const digests = spans === null ? null : raw.elementDigests(name);
    if (spans !== null && digests !== null) {
      const kept = digests.map(keptPart);
      kept.forEach((v, i) => {
        if (v === undefined) newBytes += spans[i]!.end - spans[i]!.start;
      });
      members.push({ name, span, spans, digests, kept });
      // A tool list recurs whole (json/known-members.ts); a conversation grows, and never does.
      if (!CONVERSATION.has(name)) raw.memberDigest(name);
    } else if (span.end - span.start >= KEPT_MEMBER_BYTES) {
      const digest = raw.memberDigest(name)!;
      const kept = keptPart(digest);
      if (kept === undefined) newBytes += span.end - span.start;
      members.push({ name, span, digest, kept });
    } else {
      newBytes += span.end - span.start;
      members.push({ name, span });
    }
  }
  return { members, newBytes };
}

/** A new part's value, kept (frozen) when it was sent before: what an agent sends again is kept, a one-off part is not. */
function keptIfSentBefore(digest: string, value: unknown, span: Span): unknown {
  return sentBefore(digest) ? keepPart(digest, value, span.end - span.start) : value;
}

/**
 * The body parsed part by part: the kept parts as kept, the new ones parsed (and kept if sent before). Equal to
 * JSON.parse of the text: the spans are exactly the values, and each part is parsed as JSON.
 */
function parseByParts(bytes: Buffer, raw: ReceivedJson, members: readonly Planned[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const parse = (span: Span) => parsePart(bytes.subarray(span.start, span.end));
  for (const m of members) {
    if ('spans' in m) {
      out[m.name] = m.kept.map((v, i) => (v !== undefined ? v : keptIfSentBefore(m.digests[i]!, parse(m.spans[i]!), m.spans[i]!)));
    } else if ('digest' in m) {
      out[m.name] = m.kept !== undefined ? m.kept : keptIfSentBefore(m.digest, parse(m.span), m.span);
    } else {
      out[m.name] = parse(m.span);
    }
  }
  raw.bind(out);
  return out;
}

/** After a whole parse of the body `raw` holds: the parts sent before are kept, frozen, as they are in `value`. */
function keepPartsSentBefore(value: Record<string, unknown>, members: readonly Planned[]): void {
  for (const m of members) {
    const v = value[m.name];
    if ('spans' in m && Array.isArray(v)) m.kept.forEach((k, i) => k === undefined && keptIfSentBefore(m.digests[i]!, v[i], m.spans[i]!));
    else if ('digest' in m && m.kept === undefined) keptIfSentBefore(m.digest, v, m.span);
  }
}

/**
 * Parses a request body, refusing `__proto__` and `constructor` keys as the admin interface does. Such a key, written
 * plainly or with \u escapes, needs one of three strings; a body with none of them (nearly every body) skips the
 * guard's scans. An object body of SMALL_BODY_BYTES or more is registered with its bytes (see ReceivedJson), and one of
 * MIN_BODY_BYTES or more is parsed by parts when most of it was sent before, so that what an agent sent at an earlier
 * step is not parsed again.
 */
export function parseReceivedJson(bytes: Buffer): unknown {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
  if (bytes.length < SMALL_BODY_BYTES) {
    // Decoding is fast at this size, and serialising again costs less than splicing bytes: not registered.
    const text = bytes.toString('utf8');
    return bom || MAY_HOLD_PROTOTYPE_KEYS.test(text) ? guardedParse(text) : JSON.parse(text);
  }
  // Parsed by parts when most of it was sent before; a body mostly new is parsed whole, which costs less.
  const raw = !bom && bytes.length >= MIN_BODY_BYTES && bytes[skipSpace(bytes, 0)] === 0x7b ? ReceivedJson.scan(bytes) : null;
  const planned = raw === null ? null : plan(raw);
  if (raw !== null && planned !== null && planned.newBytes * 2 < bytes.length) {
    try {
      return parseByParts(bytes, raw, planned.members);
    } catch (e) {
      if (!(e instanceof RepeatedKey)) throw e;
    }
  }
  // One byte per character, and the same ASCII characters as the UTF-8 text.
  const latin1 = bytes.toString('latin1');
  const guarded = bom || MAY_HOLD_PROTOTYPE_KEYS.test(latin1);
  const text = guarded ? bytes.toString('utf8') : textOf(bytes, latin1);
  const value = guarded ? guardedParse(text) : JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  // Bytes that repeat a key are not forwarded as received: the upstream gets the parsed value the checks read.
  if (repeatsKeyOf(text, value)) return value;
  const body = value as Record<string, unknown>;
  if (raw !== null && planned !== null) {
    // The spans and digests found are those of this value: JSON.parse read the same bytes.
    raw.bind(body);
    keepPartsSentBefore(body, planned.members);
  } else {
    ReceivedJson.of(bytes, body);
  }
  return value;
}
