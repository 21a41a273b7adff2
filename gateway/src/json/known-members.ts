// Top-level members that many bodies send with the same bytes: an agent's tool list, its system prompt or instructions.
// Comparing a member's bytes with those of one seen before costs a tenth of digesting them, and spares finding its
// elements again: a member seen twice with the same digest is kept, bytes, spans and digests, and later bodies that
// hold the same bytes at a member of that name take them from here.
import { Generations } from './generations.js';
import type { Span } from './received-json.js';

/** Members smaller than this are scanned and digested each time: comparing would save little. */
const MIN_BYTES = 4_096;
/** Members kept per name (the tool lists of a few agents, or of a few versions of one agent). */
const PER_NAME = 4;
/** Bytes kept in all: when more would be kept, everything is forgotten and kept again as it recurs. */
const MAX_BYTES = 4 * 1024 * 1024;
/** Arrays of more elements are not kept: their spans and digests would outweigh their bytes. */
const MAX_ELEMENTS = 4_096;
/** Digests of members seen once, remembered so that a second sighting keeps the member. */
const SEEN_ONCE = 4_096;

export interface KnownMember {
  /** A copy of the member's bytes (a JSON array, object or string: it ends where its bytes end). */
  readonly bytes: Buffer;
  readonly digest: string;
  /** The spans of its elements relative to its first byte, when it is an array whose elements were found. */
  readonly elements: readonly Span[] | null;
  readonly elementDigests: readonly string[] | null;
}

const byName = new Map<string, KnownMember[]>();
let keptBytes = 0;
const seen = new Generations<true>(SEEN_ONCE);

/** The kept member named `name` whose bytes are those of `b` from `start`, if any. */
export function knownMemberAt(name: string, b: Buffer, start: number): KnownMember | undefined {
  const list = byName.get(name);
  if (list === undefined) return undefined;
  for (const k of list) {
    const end = start + k.bytes.length;
    if (end <= b.length && k.bytes.compare(b, start, end) === 0) return k;
  }
  return undefined;
}

/**
 * Tells that the member `name` at `span` of `b` has `digest` (and, for an array, these element spans and digests): the
 * second time a digest is told, the member is kept.
 */
export function memberSighted(name: string, b: Buffer, span: Span, digest: string, elements: readonly Span[] | null, elementDigests: readonly string[] | null): void {
  const size = span.end - span.start;
  const first = b[span.start];
  // Only values that end where their bytes end (not a number, whose next byte could extend it).
  if (size < MIN_BYTES || size > MAX_BYTES || (first !== 0x5b && first !== 0x7b && first !== 0x22) || (elements?.length ?? 0) > MAX_ELEMENTS) return;
  if (!seen.has(digest)) {
    seen.set(digest, true);
    return;
  }
  if (byName.get(name)?.some((k) => k.digest === digest)) return;
  if (keptBytes + size > MAX_BYTES) forgetKept();
  const list = byName.get(name) ?? [];
  list.unshift({
    bytes: Buffer.from(b.subarray(span.start, span.end)),
    digest,
    elements: elements?.map((s) => ({ start: s.start - span.start, end: s.end - span.start })) ?? null,
    elementDigests,
  });
  keptBytes += size;
  if (list.length > PER_NAME) keptBytes -= list.pop()!.bytes.length;
  byName.set(name, list);
}

function forgetKept(): void {
  byName.clear();
  keptBytes = 0;
}

/** Forgets every kept member and every sighting (tests). */
export function forgetKnownMembers(): void {
  forgetKept();
  seen.clear();
}
