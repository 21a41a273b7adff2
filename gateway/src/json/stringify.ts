// JSON.stringify for request bodies the gateway builds (a translation, an edited copy), which hold mostly what the
// client sent: kept parts (json/part-values.ts) and the long texts in them. Writing a long text as JSON means reading
// every character for escapes; an agent sends the same texts at every step, so their JSON is looked up instead.
import { isKeptPart } from './part-values.js';

/** Texts from this length are looked up; shorter ones cost less to write than to look up. */
const LONG = 512;
/** Characters of JSON kept per generation for long texts (two generations, least recently used dropped first). */
const GENERATION_CHARS = 2 * 1024 * 1024;

let young = new Map<string, string>();
let old = new Map<string, string>();
let youngChars = 0;

/** Any character outside ASCII (JSON writes them as they are). */
const NON_ASCII = /[^\x00-\x7f]/;
const NON_ASCII_ALL = /[^\x00-\x7f]/g;
const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * JSON text with every character outside ASCII written as its \u escape (JSON's own form for any character; outside
 * strings JSON has none). An ASCII text is one byte per character: sending it costs a copy, where a text with even
 * one other character is encoded to UTF-8 character by character (a sixth of a translated agent request's CPU).
 */
function ascii(json: string): string {
  return NON_ASCII.test(json) ? json.replace(NON_ASCII_ALL, escapeUnit) : json;
}

/** JSON of a long string, looked up by the string (equal strings, equal JSON). */
function longString(s: string): string {
  let json = young.get(s);
  if (json !== undefined) return json;
  json = old.get(s) ?? ascii(JSON.stringify(s));
  if (youngChars + json.length > GENERATION_CHARS) {
    old = young;
    young = new Map();
    youngChars = 0;
  }
  young.set(s, json);
  youngChars += json.length;
  return json;
}

/** JSON of kept parts (frozen: it never changes) whose JSON is long. */
const keptJson = new WeakMap<object, string>();

function plainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

function write(v: unknown, depth: number): string | undefined {
  if (typeof v === 'string') return v.length >= LONG ? longString(v) : ascii(JSON.stringify(v));
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (isKeptPart(v)) {
    let json = keptJson.get(v);
    if (json === undefined) {
      json = walk(v, depth);
      if (json.length >= LONG) keptJson.set(v, json);
    }
    return json;
  }
  if (Array.isArray(v) || plainObject(v)) return walk(v, depth);
  const json = JSON.stringify(v);
  return json === undefined ? json : ascii(json);
}

/** Nesting past which the whole body is left to JSON.stringify, which has its own limit. */
const MAX_DEPTH = 256;

function walk(v: object, depth: number): string {
  if (depth >= MAX_DEPTH) throw new RangeError('nested too deeply to walk');
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + (write(v[i], depth + 1) ?? 'null');
    return `${out}]`;
  }
  let out = '{';
  let first = true;
  for (const k of Object.keys(v)) {
    const json = write((v as Record<string, unknown>)[k], depth + 1);
    if (json === undefined) continue;
    out += `${first ? '' : ','}${k.length >= LONG ? longString(k) : ascii(JSON.stringify(k))}:${json}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * JSON of a body: what JSON.stringify(value) gives (plain objects and arrays, strings, numbers, booleans, null; members
 * that are undefined or functions left out), in ASCII (other characters escaped; it parses to the same value), with the
 * JSON of long texts and of kept parts looked up.
 */
export function stringifyBody(value: unknown): string {
  try {
    return write(value, 0) ?? 'null';
  } catch (e) {
    // Nesting deeper than MAX_DEPTH: JSON.stringify writes it, or refuses it as it always has.
    if (e instanceof RangeError) return ascii(JSON.stringify(value) ?? 'null');
    throw e;
  }
}

/** Forgets the JSON of long texts (tests). */
export function forgetLongTexts(): void {
  young = new Map();
  old = new Map();
  youngChars = 0;
}
