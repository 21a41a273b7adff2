import { MAX_REPEATS_TRACKED } from './spec.js';

/**
 * Sightings of retry-block keys for MemoryCounters.countRepeat, in about 12 bytes a slot for the common case of a key seen once.
 *
 * An entry is identified by (key, window): the window (rounded up to whole ms) is hashed with the key, so calls with
 * different windows never share sightings (admission already puts the window in the key; the Redis counters do not
 * separate them, but no caller reuses a key across windows).
 *
 * Layout: 256 shards, each an open-addressing table (linear probing, backward-shift deletion; load at most 0.8, 0.5
 * after a resize) in one Uint32Array of 3 words a slot:
 *   [fingerprint lane A, fingerprint lane B, tag]
 *   tag 0                  empty
 *   tag 1..2^31-1          a key seen once (or whose earlier sightings have left the window): the time that sighting
 *                          leaves the window (sighting + window), in ms after `base`
 *   tag 2^31 + i           a key seen several times within its window: exact times in the shard's `multis[i]`
 * Counting is exact: with integer ms times, `now - t < windowMs` holds exactly when `now - t < ceil(windowMs)`, so one
 * expiry per slot answers "is the earlier sighting still in the window" with no rounding.
 *
 * Fingerprints: two independent 32-bit multiply-xorshift lanes over the key's UTF-16 code units, seeded with the window
 * and finished with murmur3's fmix32, compared on all 64 bits (lane A is a bijection of the window for a given key, so
 * one key under two windows never shares an entry). Two different (key, window) pairs share an entry only when all 64
 * bits agree: each then also counts the other's sightings (an over-count; with different windows, the shorter one's
 * pruning may also drop the longer one's oldest sightings). For a call, the chance that some other live entry has its
 * fingerprint is at most live / 2^64: with 2 M live entries about 1.1e-13 a call, i.e. one merged entry about every
 * 30 years at a constant 10,000 calls/s with 2 M live keys.
 *
 * Expiry: `sweep` (once a minute, from MemoryCounters.maintain) deletes slots whose window has passed and shrinks tables
 * that fell below 20 % load, one shard at a time over the next calls; tables grow by themselves on insert. A slot past
 * its window no longer counts even before the sweep removes it.
 *
 * Bound (issue 23): at most `maxEntries` entries (default 1 M, about 15-24 MB), so a rate of distinct requests times a
 * long window cannot take memory without limit. A shard that goes past its share first drops what left its window, then,
 * if still full, the quarter of its entries nearest to leaving their window: those sightings are forgotten early (a
 * repeat of one may count one sighting fewer), never counted twice. A key repeated within its window has its latest
 * sighting's end, so the keys of an agent stuck in a loop are the last to go. `trimmed()` counts the entries dropped so.
 *
 * Times are 31-bit offsets from `base`; when `now` leaves the range (after ~15 days, or a clock step back of more than
 * ~6 days) every slot is rebased in one pass. Windows over MAX_COMPACT_WINDOW_MS (policies allow at most 24 h), windows
 * that are not positive and finite, and non-finite `now` go to `exact`, a plain map with the previous behaviour.
 */
export class RepeatTracker {
  private shards: Shard[] = newShards();
  /** Absolute ms that slot time 0 stands for; NaN until the first call. */
  private base = NaN;
  private live = 0;
  /** The sweep still running through the shards (see `sweep`): its number, its time and how many shards it has left. */
  private sweepGen = 0;
  private sweepAt = 0;
  private sweepsLeft = 0;
  private sweepCursor = 0;
  /** Keys with windows the compact table does not hold, keyed `${windowMs}|${key}`. */
  private readonly exact = new Map<string, ExactRepeats>();
  /** Entries a shard holds at most (maxEntries / SHARDS). */
  private readonly shardCap: number;
  private readonly maxExact: number;
  private dropped = 0;

  constructor(maxEntries = DEFAULT_MAX_REPEAT_ENTRIES) {
    this.shardCap = Math.max(MIN_CAPACITY, Math.ceil(maxEntries / SHARDS));
    this.maxExact = Math.max(1, maxEntries);
  }

  /** Records one sighting and returns the sightings of (key, window) in the window, this one included, capped. */
  count(key: string, windowMs: number, now: number): number {
    if (!(windowMs > 0 && windowMs <= MAX_COMPACT_WINDOW_MS && Number.isFinite(now))) return this.countExact(key, windowMs, now);
    const w = Math.ceil(windowMs);
    let rel = now - this.base;
    if (!(rel >= 0 && rel <= REL_HIGH)) {
      this.rebase(now);
      rel = now - this.base;
    }
    fingerprint(key, w);
    const a = fpA;
    const b = fpB;
    const shard = this.shards[b >>> SHARD_SHIFT];
    if (this.sweepsLeft > 0) {
      // A shard is swept before anything reads it, so every lookup sees what an all-at-once sweep would have left.
      if (shard.sweptGen !== this.sweepGen) this.sweepShard(shard);
      this.sweepNext();
    }
    const slots = shard.slots;
    const end = shard.capacity * 3;
    let i = home(a, shard.capacity) * 3;
    for (let tag = slots[i + 2]; tag !== 0; tag = slots[i + 2]) {
      if (slots[i] === a && slots[i + 1] === b) return again(shard, slots, i, tag, w, now, rel, this.base);
      i += 3;
      if (i === end) i = 0;
    }
    slots[i] = a;
    slots[i + 1] = b;
    slots[i + 2] = rel + w;
    this.live++;
    if (++shard.size > this.shardCap) this.trim(shard, now, rel);
    if (shard.size > shard.limit) resize(shard, Math.ceil(shard.size / RESIZE_LOAD));
    return 1;
  }

  /** Entries dropped before their window ended because a shard was full (see the class comment). */
  trimmed(): number {
    return this.dropped;
  }

  /** A shard past its share of maxEntries: drops what left its window, then the quarter nearest to leaving it. */
  private trim(shard: Shard, now: number, rel: number): void {
    const before = shard.size;
    sweepShard(shard, rel, now);
    if (shard.size > this.shardCap * TRIM_KEEP) {
      const ends = new Float64Array(shard.size);
      const slots = shard.slots;
      let n = 0;
      for (let i = 2; i < slots.length; i += 3) {
        const tag = slots[i];
        if (tag === 0) continue;
        ends[n++] = tag < MULTI ? tag : shard.multis[tag - MULTI]!.expires - this.base;
      }
      ends.subarray(0, n).sort();
      const cut = ends[Math.floor(n * TRIM_DROP)]!;
      sweepShard(shard, cut, cut + this.base);
      this.dropped += before - shard.size;
    }
    this.live -= before - shard.size;
  }

  /**
   * Drops entries whose window had passed at `now` and shrinks tables that got sparse: what the previous implementation
   * did in one go, spread over the following calls (each sweeps the shard it reads, if not yet done, and one more), so no
   * call pauses for a pass over every table. A sweep still running when the next starts is finished first.
   */
  sweep(now: number): void {
    for (const [k, r] of this.exact) {
      const last = r.times[r.times.length - 1];
      if (last === undefined || last <= now - r.windowMs) this.exact.delete(k);
    }
    this.finishSweep();
    if (this.live === 0) return;
    this.sweepGen++;
    this.sweepAt = now;
    this.sweepsLeft = SHARDS;
    this.sweepCursor = 0;
  }

  clear(): void {
    this.shards = newShards();
    this.base = NaN;
    this.live = 0;
    this.sweepGen = 0;
    this.sweepsLeft = 0;
    this.exact.clear();
  }

  /** Entries held: keys (per window) with at least one sighting not yet swept. For tests and measurements. */
  entries(): number {
    this.finishSweep();
    return this.live + this.exact.size;
  }

  /** Sizes for tests and measurements: entries, those with exact times, and table slots (12 bytes each). */
  stats(): { entries: number; multi: number; slots: number } {
    this.finishSweep();
    let slots = 0;
    let multi = this.exact.size;
    for (const s of this.shards) {
      slots += s.capacity;
      multi += s.multis.length - s.freeMultis.length;
    }
    return { entries: this.live + this.exact.size, multi, slots };
  }

  private finishSweep(): void {
    while (this.sweepsLeft > 0) this.sweepNext();
  }

  /** Sweeps the next shard the running sweep has not done. */
  private sweepNext(): void {
    while (this.sweepCursor < SHARDS) {
      const shard = this.shards[this.sweepCursor++];
      if (shard.sweptGen !== this.sweepGen) {
        this.sweepShard(shard);
        return;
      }
    }
    this.sweepsLeft = 0;
  }

  private sweepShard(shard: Shard): void {
    const before = shard.size;
    if (before > 0) sweepShard(shard, this.sweepAt - this.base, this.sweepAt);
    else if (shard.multis.length > 0) {
      shard.multis = [];
      shard.freeMultis = [];
    }
    if (shard.capacity > MIN_CAPACITY && shard.size < shard.capacity * SHRINK_LOAD) {
      resize(shard, Math.max(MIN_CAPACITY, Math.ceil(shard.size / RESIZE_LOAD)));
    }
    this.live -= before - shard.size;
    shard.sweptGen = this.sweepGen;
    this.sweepsLeft--;
  }

  /** Moves `base` so that `now` sits in the middle of the 31-bit range (one pass; removes nothing, the sweep does). */
  private rebase(now: number): void {
    this.finishSweep();
    const base = now - REL_MIDDLE;
    if (this.live > 0) {
      const delta = base - this.base;
      for (const shard of this.shards) {
        const slots = shard.slots;
        for (let i = 2; i < slots.length; i += 3) {
          const tag = slots[i];
          if (tag === 0 || tag >= MULTI) continue;
          // Before the new base: long past its window, kept as 1 (expired) for the sweep. Past the range: only after the
          // clock stepped back by more than ~18 days; it then leaves the window early.
          slots[i] = Math.min(Math.max(tag - delta, 1), MULTI - 1);
        }
      }
    }
    this.base = base;
  }

  /** The previous implementation, for windows and times the compact table does not take. */
  private countExact(key: string, windowMs: number, now: number): number {
    const k = `${windowMs}|${key}`;
    let r = this.exact.get(k);
    if (!r) {
      r = { windowMs, times: [] };
      if (this.exact.size >= this.maxExact) {
        this.exact.delete(this.exact.keys().next().value!);
        this.dropped++;
      }
      this.exact.set(k, r);
    }
    const cutoff = now - windowMs;
    let drop = 0;
    while (drop < r.times.length && r.times[drop] <= cutoff) drop++;
    if (drop > 0) r.times.splice(0, drop);
    r.times.push(now);
    if (r.times.length > MAX_REPEATS_TRACKED) r.times.splice(0, r.times.length - MAX_REPEATS_TRACKED);
    return r.times.length;
  }
}

/** A further sighting of the key in slot `i` (tag `tag`) of `shard`; `rel` is now after `base`. */
function again(shard: Shard, slots: Uint32Array, i: number, tag: number, w: number, now: number, rel: number, base: number): number {
  if (tag < MULTI) {
    // One earlier sighting, still in the window (it leaves it after now): keep both times exactly.
    if (tag > rel) {
      slots[i + 2] = MULTI + addMulti(shard, { times: [tag - w + base, now], head: 0, expires: now + w });
      return 2;
    }
    slots[i + 2] = rel + w;
    return 1;
  }
  const index = tag - MULTI;
  const m = shard.multis[index]!;
  const times = m.times;
  const cutoff = now - w;
  let head = m.head;
  while (head < times.length && times[head] <= cutoff) head++;
  times.push(now);
  let count = times.length - head;
  if (count > MAX_REPEATS_TRACKED) {
    head += count - MAX_REPEATS_TRACKED;
    count = MAX_REPEATS_TRACKED;
  }
  if (count === 1) {
    // Every earlier sighting left the window: back to a compact slot.
    shard.multis[index] = undefined;
    shard.freeMultis.push(index);
    slots[i + 2] = rel + w;
    return 1;
  }
  if (head >= COMPACT_HEAD && head * 2 >= times.length) {
    times.copyWithin(0, head);
    times.length -= head;
    head = 0;
  }
  m.head = head;
  m.expires = now + w;
  return count;
}

function addMulti(shard: Shard, m: Multi): number {
  const free = shard.freeMultis.pop();
  if (free !== undefined) {
    shard.multis[free] = m;
    return free;
  }
  shard.multis.push(m);
  return shard.multis.length - 1;
}

/** Longest window the compact table holds: 2^28 ms, about 74.6 h. */
export const MAX_COMPACT_WINDOW_MS = 2 ** 28;

interface Multi {
  /** Sighting times (ms); those before `head` have left the window. */
  times: number[];
  head: number;
  /** When the newest sighting leaves the window (ms): the sweep drops the entry from then. */
  expires: number;
}

interface ExactRepeats {
  windowMs: number;
  times: number[];
}

interface Shard {
  /** 3 words a slot: fingerprint lane A, lane B, tag. */
  slots: Uint32Array;
  capacity: number;
  size: number;
  /** Size above which the table grows (MAX_LOAD). */
  limit: number;
  /** Exact times of this shard's keys seen more than once within their window, indexed from the slot tag. */
  multis: Array<Multi | undefined>;
  freeMultis: number[];
  /** The number of the last sweep that went through this shard. */
  sweptGen: number;
}

const SHARD_BITS = 8;
const SHARDS = 1 << SHARD_BITS;
const SHARD_SHIFT = 32 - SHARD_BITS;
const MIN_CAPACITY = 8;
const MAX_LOAD = 0.8;
/** Load after a resize. */
const RESIZE_LOAD = 0.5;
const SHRINK_LOAD = 0.2;
/** Entries held at most by default: about 15-24 MB of tables. */
export const DEFAULT_MAX_REPEAT_ENTRIES = 1 << 20;
/** A full shard that still holds more than this share of its cap once swept drops the TRIM_DROP share nearest their end. */
const TRIM_KEEP = 0.9;
const TRIM_DROP = 0.25;
const MULTI = 2 ** 31;
/** Slot times are ms after `base` in [0, 2^31): `now` is kept within [0, REL_HIGH] so that now + window fits. */
const REL_MIDDLE = 2 ** 29;
const REL_HIGH = MULTI - 1 - MAX_COMPACT_WINDOW_MS;
/** A multi entry's dropped times are compacted away once there are this many and they are half the array. */
const COMPACT_HEAD = 64;
const INV_2_32 = 1 / 2 ** 32;

function newShards(): Shard[] {
  return Array.from({ length: SHARDS }, () => ({
    slots: new Uint32Array(MIN_CAPACITY * 3),
    capacity: MIN_CAPACITY,
    size: 0,
    limit: Math.floor(MIN_CAPACITY * MAX_LOAD),
    multis: [],
    freeMultis: [],
    sweptGen: 0,
  }));
}

/** The home slot of lane A in a table of `capacity` slots (multiply-shift range reduction, exact in doubles). */
function home(a: number, capacity: number): number {
  return Math.floor(a * capacity * INV_2_32);
}

let fpA = 0;
let fpB = 0;

/** Sets fpA, fpB (unsigned 32-bit) to the fingerprint of (key, window); no allocation. */
function fingerprint(key: string, w: number): void {
  const n = key.length;
  let a = 0x811c9dc5 ^ w;
  let b = Math.imul(w, 0x9e3779b1) ^ 0x5bd1e995;
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    a ^= a >>> 15;
    b = Math.imul(b ^ c, 0x85ebca6b);
    b ^= b >>> 13;
  }
  a = fmix32(a ^ n);
  fpA = a >>> 0;
  fpB = fmix32(b ^ Math.imul(n, 0xc2b2ae35) ^ a) >>> 0;
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Rehashes a shard into `capacity` slots. */
function resize(shard: Shard, capacity: number): void {
  const old = shard.slots;
  const slots = new Uint32Array(capacity * 3);
  const end = capacity * 3;
  for (let j = 0; j < old.length; j += 3) {
    if (old[j + 2] === 0) continue;
    const a = old[j];
    let i = home(a, capacity) * 3;
    while (slots[i + 2] !== 0) {
      i += 3;
      if (i === end) i = 0;
    }
    slots[i] = a;
    slots[i + 1] = old[j + 1];
    slots[i + 2] = old[j + 2];
  }
  shard.slots = slots;
  shard.capacity = capacity;
  shard.limit = Math.floor(capacity * MAX_LOAD);
}

/**
 * Deletes the shard's slots expired at `now` (`rel` after base) and renumbers its live multi entries without gaps.
 * The pass starts after an empty slot, so no probe run wraps around its start: backward shifts only pull entries not yet
 * visited into the current slot, and every entry is visited exactly once.
 */
function sweepShard(shard: Shard, rel: number, now: number): void {
  const multis = shard.multis;
  const kept: Multi[] = [];
  const slots = shard.slots;
  const end = slots.length;
  let start = 0;
  while (slots[start + 2] !== 0) start += 3;
  let i = start + 3 === end ? 0 : start + 3;
  while (i !== start) {
    const tag = slots[i + 2];
    if (tag !== 0) {
      let expired: boolean;
      if (tag < MULTI) expired = tag <= rel;
      else {
        const m = multis[tag - MULTI]!;
        expired = m.expires <= now;
        if (!expired) {
          slots[i + 2] = MULTI + kept.length;
          kept.push(m);
        }
      }
      if (expired) {
        deleteAt(slots, i, shard.capacity);
        shard.size--;
        continue;
      }
    }
    i += 3;
    if (i === end) i = 0;
  }
  shard.multis = kept;
  shard.freeMultis = [];
}

/** Empties slot `i`, shifting later entries of its probe run back so lookups still find them. */
function deleteAt(slots: Uint32Array, i: number, capacity: number): void {
  const end = capacity * 3;
  let hole = i;
  let j = i;
  for (;;) {
    j += 3;
    if (j === end) j = 0;
    if (slots[j + 2] === 0) break;
    const h = home(slots[j], capacity) * 3;
    // The entry at j may move back to the hole when the hole lies between its home and j (cyclically).
    const fromHome = j >= h ? j - h : j - h + end;
    const fromHole = j >= hole ? j - hole : j - hole + end;
    if (fromHome >= fromHole) {
      slots[hole] = slots[j];
      slots[hole + 1] = slots[j + 1];
      slots[hole + 2] = slots[j + 2];
      hole = j;
    }
  }
  slots[hole + 2] = 0;
  slots[hole] = 0;
  slots[hole + 1] = 0;
}
