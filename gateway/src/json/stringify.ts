// JSON bytes for request bodies the gateway builds (a translation, an edited copy), which hold mostly what the client
// sent: kept parts (json/part-values.ts) and the long texts in them. Writing a long text as JSON means reading every
// character for escapes, and turning a long string into bytes costs more still (Node 20 encodes strings to UTF-8 at
// well under 1 GB/s, and flattens a string built by concatenation first). An agent sends the same texts at every
// step: their JSON is kept as bytes, and a body is the concatenation of such bytes and of the little that is new.
import { Generations } from './generations.js';
import { isKeptPart } from './part-values.js';

/** Texts (and kept parts' JSON) from this length are kept as bytes; shorter ones cost less to write than to look up. */
const LONG = 512;
/** Bytes of JSON kept per generation for long texts (two generations, least recently used dropped first). */
const GENERATION_BYTES = 2 * 1024 * 1024;

/** JSON bytes of long strings, by the string (see Generations). */
const longStrings = new Generations<Buffer>(GENERATION_BYTES, (json) => json.length);

/** Any character outside ASCII (JSON writes them as they are). */
const NON_ASCII = /[^\x00-\x7f]/;
const NON_ASCII_ALL = /[^\x00-\x7f]/g;
const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * JSON text with every character outside ASCII written as its \u escape (JSON's own form for any character; outside
 * strings JSON has none): one byte per character, so its bytes are a copy of it (latin1), never a UTF-8 encoding.
 */
function ascii(json: string): string {
  return NON_ASCII.test(json) ? json.replace(NON_ASCII_ALL, escapeUnit) : json;
}

/** JSON of a long string as bytes, looked up by the string (equal strings, equal JSON). */
function longString(s: string): Buffer {
  let json = longStrings.get(s);
  if (json === undefined) longStrings.set(s, (json = Buffer.from(ascii(JSON.stringify(s)), 'latin1')));
  return json;
}

/** JSON of kept parts (frozen: it never changes) whose JSON is long. */
const keptJson = new WeakMap<object, Buffer>();

/** Nesting past which the whole body is left to JSON.stringify, which has its own limit. */
const MAX_DEPTH = 256;

/** JSON being written: ASCII text, and bytes kept from earlier writes. */
class Out {
  private readonly chunks: Buffer[] = [];
  private text = '';

  str(s: string): void {
    this.text += s;
  }

  bytes(b: Buffer): void {
    if (this.text !== '') {
      this.chunks.push(Buffer.from(this.text, 'latin1'));
      this.text = '';
    }
    this.chunks.push(b);
  }

  done(): Buffer {
    if (this.text !== '' || this.chunks.length === 0) this.chunks.push(Buffer.from(this.text, 'latin1'));
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}

function plainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** Whether `v` is written at all as a member (JSON.stringify leaves out undefined, functions and symbols). */
const written = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

/**
 * Writes `v`. `memo`: whether the JSON of a kept part may be kept. Within a kept part being written it may not, so a
 * part's JSON holds its nested parts' JSON once, not once per level (the memo is never more than a copy of the parts
 * a body reaches from outside them).
 */
function write(out: Out, v: unknown, depth: number, memo: boolean): void {
  if (typeof v === 'string') {
    if (v.length >= LONG) out.bytes(longString(v));
    else out.str(ascii(JSON.stringify(v)));
    return;
  }
  if (v === null || typeof v !== 'object') {
    out.str(written(v) ? JSON.stringify(v) : 'null');
    return;
  }
  if (isKeptPart(v)) {
    let json = keptJson.get(v);
    if (json === undefined) {
      if (!memo) {
        walk(out, v, depth, false);
        return;
      }
      const own = new Out();
      walk(own, v, depth, false);
      json = own.done();
      if (json.length < LONG) {
        out.str(json.toString('latin1'));
        return;
      }
      keptJson.set(v, json);
    }
    out.bytes(json);
    return;
  }
  if (Array.isArray(v) || plainObject(v)) walk(out, v, depth, memo);
  else out.str(ascii(JSON.stringify(v) ?? 'null'));
}

/** JSON.stringify of an object this writer does not walk (one with toJSON, a boxed value), or null for those it does. */
function foreignJson(v: object): string | undefined | null {
  return Array.isArray(v) || isKeptPart(v) || plainObject(v) ? null : JSON.stringify(v);
}

function walk(out: Out, v: object, depth: number, memo: boolean): void {
  if (depth >= MAX_DEPTH) throw new RangeError('nested too deeply to walk');
  if (Array.isArray(v)) {
    out.str('[');
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out.str(',');
      write(out, v[i], depth + 1, memo);
    }
    out.str(']');
    return;
  }
  out.str('{');
  let first = true;
  for (const k of Object.keys(v)) {
    const value = (v as Record<string, unknown>)[k];
    if (!written(value)) continue;
    // A member whose toJSON gives undefined is left out, as JSON.stringify leaves it out.
    const foreign = value !== null && typeof value === 'object' ? foreignJson(value) : null;
    if (foreign === undefined) continue;
    out.str(first ? '' : ',');
    if (k.length >= LONG) out.bytes(longString(k));
    else out.str(ascii(JSON.stringify(k)));
    out.str(':');
    if (foreign === null) write(out, value, depth + 1, memo);
    else out.str(ascii(foreign));
    first = false;
  }
  out.str('}');
}

/**
 * The JSON of a body as bytes: what JSON.stringify(value) gives (plain objects and arrays, strings, numbers, booleans,
 * null; members that are undefined or functions left out), in ASCII (other characters escaped; it parses to the same
 * value), with the JSON of long texts and of kept parts looked up.
 */
export function stringifyBody(value: unknown): Buffer {
  try {
    const out = new Out();
    write(out, value, 0, true);
    return out.done();
  } catch (e) {
    // Nesting deeper than MAX_DEPTH: JSON.stringify writes it, or refuses it as it always has.
    if (e instanceof RangeError) return Buffer.from(ascii(JSON.stringify(value) ?? 'null'), 'latin1');
    throw e;
  }
}

/** Forgets the JSON of long texts (tests). */
export function forgetLongTexts(): void {
  longStrings.clear();
}
