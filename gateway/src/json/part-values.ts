// Parsed parts of request bodies (a message, an input item, a tool, a system prompt), by the digest of their bytes. An
// agent sends its whole conversation again at every step: the parts an earlier step sent are taken from here instead of
// being decoded and parsed again, and only the new ones are parsed. A part is frozen, all the way down, before it is
// kept: requests share it, and no code may change what another request reads.
import { Generations } from './generations.js';

/**
 * Bytes of parts held per generation, as received plus ENTRY_BYTES each (a parsed part of some size takes two to three
 * times its bytes of heap): the system prompts and tool lists every agent shares, and the latest turns of the
 * conversations in flight.
 */
const GENERATION_BYTES = 3 * 1024 * 1024;

/** What keeping a part costs beside its bytes: the map's slot, the digest, the record (counted, so tiny parts are bounded too). */
const ENTRY_BYTES = 160;

interface Kept {
  value: unknown;
  bytes: number;
}

/** Kept parts by digest, GENERATION_BYTES per generation (see Generations). */
const values = new Generations<Kept>(GENERATION_BYTES, (kept) => kept.bytes);

/** Digests of parts parsed once and not kept, per generation: a part is kept the second time it is sent. */
const SIGHTINGS = 8_192;
const sighted = new Generations<true>(SIGHTINGS);

/**
 * Whether the part with `digest` was parsed before (and is worth keeping). The first time it is not: a body sent once
 * (a one-off request, an agent's first step) pays no more than parsing, and only what an agent sends again is frozen
 * and kept.
 */
export function sentBefore(digest: string): boolean {
  if (sighted.has(digest)) return true;
  sighted.set(digest, true);
  return false;
}

/** The parsed part whose bytes have `digest`, or undefined when none is kept. */
export function keptPart(digest: string): unknown {
  return values.get(digest)?.value;
}

/** Kept parts and every object in them: frozen all the way down, so whatever is computed from one holds as long as it lives. */
const kept = new WeakSet<object>();

/** Whether `value` is a kept part or an object in one (frozen all the way down, and possibly shared between requests). */
export function isKeptPart(value: unknown): value is object {
  return typeof value === 'object' && value !== null && kept.has(value);
}

/** Keeps `value` (parsed from `bytes` bytes whose digest is `digest`), frozen, and returns it. */
export function keepPart(digest: string, value: unknown, bytes: number): unknown {
  deepFreeze(value);
  // A part larger than a generation would only push everything else out.
  if (bytes <= GENERATION_BYTES) values.set(digest, { value, bytes: bytes + ENTRY_BYTES });
  return value;
}

/** Forgets every kept part and every sighting (tests). */
export function clearKeptParts(): void {
  values.clear();
  sighted.clear();
}

/** Freezes a parsed JSON value and everything in it, without recursion (a part may nest deeply). */
function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    Object.freeze(v);
    kept.add(v);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (c !== null && typeof c === 'object') stack.push(c);
      }
    } else {
      for (const k in v) {
        const c: unknown = (v as Record<string, unknown>)[k];
        if (c !== null && typeof c === 'object') stack.push(c);
      }
    }
  }
}
