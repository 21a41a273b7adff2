/**
 * Trace ids whose spend left memory (or was never loaded into it), remembered compactly so that only those are read back
 * from the usage rows when they come back; a trace id never seen costs no database round trip (except for false
 * positives, about 1 % while the filter is within its memory budget), at about 1.8 bytes an id.
 *
 * A time-rotated Bloom filter: generations of bit arrays, the newest taking insertions. A new generation starts every
 * `rotateMs`, or sooner when the newest is full (its design count, ~0.1 % false positives), each twice the size of the
 * last up to MAX_GENERATION_BITS. A generation is dropped once everything in it was added more than `rememberMs` ago.
 * Memory is capped (`maxBytes`): at the cap no generation is added before an old one is dropped, and the newest keeps
 * taking ids past its design count, so false positives rise (more lookups that find nothing) but nothing is forgotten
 * before `rememberMs`: a cap never lets a trace's spend be lost.
 */
export class EvictedTraces {
  private generations: Generation[] = [];
  private bytes = 0;
  private readonly rotateMs: number;

  constructor(
    /** How long an id added is remembered at least. */
    private readonly rememberMs: number,
    private readonly maxBytes = DEFAULT_MAX_BYTES,
    generations = 8,
  ) {
    this.rotateMs = Math.max(1, rememberMs / Math.max(1, generations - 1));
  }

  add(id: string, now: number): void {
    hash(id);
    const g = this.current(now);
    setBits(g, h1, h2);
    g.count++;
    g.lastAdd = now;
  }

  has(id: string, now: number): boolean {
    if (this.generations.length === 0) return false;
    this.expire(now);
    hash(id);
    for (const g of this.generations) if (testBits(g, h1, h2)) return true;
    return false;
  }

  /** Sizes for tests and measurements. */
  stats(): { generations: number; bytes: number; ids: number } {
    return { generations: this.generations.length, bytes: this.bytes, ids: this.generations.reduce((n, g) => n + g.count, 0) };
  }

  clear(): void {
    this.generations = [];
    this.bytes = 0;
  }

  /** The generation taking insertions at `now`. */
  private current(now: number): Generation {
    this.expire(now);
    const last = this.generations[this.generations.length - 1];
    const due = !last || now - last.createdAt >= this.rotateMs || now < last.createdAt || last.count >= last.capacity;
    if (!due) return last;
    const bits = last && last.count >= last.capacity ? Math.min(MAX_GENERATION_BITS, last.bits.length * 64) : MIN_GENERATION_BITS;
    if (last && this.bytes + bits / 8 > this.maxBytes) return last;
    const g: Generation = { bits: new Uint32Array(bits / 32), mask: bits - 1, capacity: Math.floor(bits / BITS_PER_ID), count: 0, createdAt: now, lastAdd: now };
    this.generations.push(g);
    this.bytes += bits / 8;
    return g;
  }

  private expire(now: number): void {
    while (this.generations.length > 0 && this.generations[0]!.lastAdd + this.rememberMs < now) {
      const g = this.generations.shift()!;
      this.bytes -= g.bits.length * 4;
    }
  }
}

interface Generation {
  bits: Uint32Array;
  /** Bit count - 1 (a power of two). */
  mask: number;
  /** Ids this generation takes before the next starts (~0.1 % false positives). */
  capacity: number;
  count: number;
  createdAt: number;
  lastAdd: number;
}

/** 8 MiB: about 4.5 million ids before false positives rise. */
const DEFAULT_MAX_BYTES = 8 * 1024 * 1024;
const MIN_GENERATION_BITS = 1 << 16;
const MAX_GENERATION_BITS = 1 << 23;
/**
 * Bits per id at a generation's design count: with K probes about 0.1 % false positives per full generation, so that a
 * lookup through the handful of generations a busy week leaves stays near 1 %.
 */
const BITS_PER_ID = 14.4;
const K = 10;

let h1 = 0;
let h2 = 0;

/** Two independent 32-bit hashes of `s` into h1, h2 (h2 odd, so the K probes differ); no allocation. */
function hash(s: string): void {
  let a = 0x811c9dc5;
  let b = 0x5bd1e995;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x85ebca6b);
    b ^= b >>> 13;
  }
  h1 = fmix32(a ^ s.length) >>> 0;
  h2 = (fmix32(b ^ Math.imul(s.length, 0xc2b2ae35)) | 1) >>> 0;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function setBits(g: Generation, a: number, b: number): void {
  for (let i = 0; i < K; i++) {
    const bit = (a + Math.imul(i, b)) & g.mask;
    g.bits[bit >>> 5]! |= 1 << (bit & 31);
  }
}

function testBits(g: Generation, a: number, b: number): boolean {
  for (let i = 0; i < K; i++) {
    const bit = (a + Math.imul(i, b)) & g.mask;
    if ((g.bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}
