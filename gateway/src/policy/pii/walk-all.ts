// The fail-closed walk: every string, every number that could hold PII and every key that is not a member the dialects
// define, at any depth, without recursion. What a policy view has no rule for is read with this, so a part type a
// provider adds tomorrow is read the day it appears.
import { isUtf8 } from 'node:buffer';
import { DIALECT_MEMBERS, clientShaped } from '../../contract/dialect-members.js';
import { isCarriedThinking } from '../../translate/carried-thinking.js';
import type { TextVisitor } from './request-texts.js';

type Json = Record<string, unknown>;

/** A string value that is an identifier of the dialect (a role, a type): lowercase words, no room for PII. */
const ENUM_VALUE = /^[a-z_.]{0,64}$/;

/** Numbers shorter than this many characters hold no phone, card, account or id number. */
const NUMBER_TEXT_MIN = 7;

/**
 * Members that hold no text a client wrote, by the `type` of the object holding them. The walk skips them; everything
 * else is read. A change here is a decision: the test beside this file lists the table as it must be.
 * - thinking / redacted_thinking: signed or encrypted by the model that wrote them (the upstream refuses an edited or
 *   forged block), and left out of translated calls;
 * - reasoning / compaction `encrypted_content`: encrypted by the provider, left out of translated calls;
 * - a `base64` source (images and PDFs), MCP image and audio content: binary data;
 * - an image generation call's `result`: a base64 image.
 */
export const NO_TEXT_MEMBERS: ReadonlyMap<string, readonly string[]> = new Map([
  ['thinking', ['thinking', 'signature']],
  ['redacted_thinking', ['data']],
  ['reasoning', ['encrypted_content']],
  ['compaction', ['encrypted_content']],
  ['base64', ['data']],
  ['image', ['data']],
  ['audio', ['data']],
  ['image_generation_call', ['result']],
]);

/** Members whose value is skipped when it is an image or PDF as a base64 data URL (the binary data of an inline file). */
const DATA_URL_MEMBERS: ReadonlySet<string> = new Set(['url', 'image_url', 'file_data', 'data']);

/**
 * Base64 (standard or URL-safe, whitespace allowed) and nothing else: the only form binary data and signatures take.
 * Text in any other form (an address has an `@`) is not binary, whatever member it sits in.
 */
const BASE64_ONLY = /^[A-Za-z0-9+/=_\-\s]*$/;

/**
 * True for a member the walk skips: one NO_TEXT_MEMBERS names (a thinking block's text only when it is signed), a
 * resource `blob`, or an image or PDF data URL, each only when its value is base64; or a `type` or `role` whose value is
 * a lowercase identifier (an enum word, no room for PII). Applied only to objects a dialect shapes (see clientShaped).
 */
export function carriesNoText(holder: Json, key: string, value: unknown): boolean {
  if (key === 'type' || key === 'role') return typeof value === 'string' && ENUM_VALUE.test(value);
  if (typeof value !== 'string') return false;
  const type = holder.type;
  if (typeof type === 'string' && NO_TEXT_MEMBERS.get(type)?.includes(key)) {
    // A thinking block's text is the model's, passed back under its signature; unsigned, it is the client's text.
    if (type === 'thinking' && key === 'thinking') return typeof holder.signature === 'string' && holder.signature.length > 0 && BASE64_ONLY.test(holder.signature);
    if (key === 'encrypted_content') return isOpaque(value);
    // A base64 source of a text type (text/plain, JSON, code) is text the upstream decodes for its model: read, decoded.
    return !declaresText(holder) && BASE64_ONLY.test(value);
  }
  if (key === 'blob') return !declaresText(holder) && BASE64_ONLY.test(value);
  return DATA_URL_MEMBERS.has(key) && isBinaryDataUrl(value);
}

/** Media whose bytes the model takes as media, not as text: images, audio, video, PDFs. */
const BINARY_MEDIA = /^(?:image|audio|video)\/|^application\/pdf\s*(?:;|$)/i;

/** Whether a media type names media (images, audio, video, PDFs) rather than text. */
export function isMediaType(media: string): boolean {
  return BINARY_MEDIA.test(media.trim());
}

/** The media type an object declares for its data (`media_type`, `mimeType`, `mime_type`), if any. */
function declaredMedia(holder: Json): string | undefined {
  const m = holder.media_type ?? holder.mimeType ?? holder.mime_type;
  return typeof m === 'string' ? m.trim() : undefined;
}

/** True when an object declares a media type for its data and that type is not media (text/plain, JSON, CSV, code). */
function declaresText(holder: Json): boolean {
  const media = declaredMedia(holder);
  return media !== undefined && !isMediaType(media);
}

/** Members that may hold encoded text the upstream decodes: data URLs, and base64 sources and blobs of a text type. */
const ENCODED_MEMBERS: ReadonlySet<string> = new Set([...DATA_URL_MEMBERS, 'blob']);

/** Encoded text, decoded: the text the model reads, and how a replacement of it is written back in the same form. */
interface DecodedText {
  text: string;
  encode(text: string): string;
}

/**
 * The text an upstream decodes from `holder[key]` before its model reads it, or undefined when the value is not such:
 * a data URL of any type but media (`data:text/plain;base64,...`, `data:application/json,%7B...`; no type is
 * text/plain, as RFC 2397 has it), or a base64 `data` or `blob` whose object declares a text media type.
 */
export function decodedText(holder: Json, key: string, value: string): DecodedText | undefined {
  if (!ENCODED_MEMBERS.has(key)) return undefined;
  if (value.startsWith('data:')) {
    const comma = value.indexOf(',');
    if (comma === -1) return undefined;
    const head = value.slice(0, comma);
    const params = head.slice(5).split(';');
    const media = params[0]!.trim();
    if (media !== '' && isMediaType(media)) return undefined;
    const payload = value.slice(comma + 1);
    if (params.length > 1 && params[params.length - 1]!.trim().toLowerCase() === 'base64') {
      const d = decodedBase64(payload);
      return { text: d.text, encode: (t) => `${head},${d.encode(t)}` };
    }
    const bytes = percentBytes(payload);
    const encoding = textEncodingOf(bytes);
    return { text: bytes.toString(encoding), encode: (t) => `${head},${percentEncoded(Buffer.from(t, encoding))}` };
  }
  if ((key === 'data' || key === 'blob') && declaresText(holder) && BASE64_ONLY.test(value)) return decodedBase64(value);
  return undefined;
}

/**
 * How a file's bytes read as text: UTF-8 when they are, else one character per byte (Latin-1), so that the ASCII in
 * any file (a Latin-1 text, a log with a stray byte) is read, and a rewrite gives every other byte back as it was.
 */
function textEncodingOf(bytes: Uint8Array): 'utf8' | 'latin1' {
  return isUtf8(bytes) ? 'utf8' : 'latin1';
}

/** Base64 data as the text the upstream decodes from it (see textEncodingOf), and a replacement written back as base64. */
export function decodedBase64(value: string): DecodedText {
  const bytes = Buffer.from(value, 'base64');
  const encoding = textEncodingOf(bytes);
  return { text: bytes.toString(encoding), encode: (t) => Buffer.from(t, encoding).toString('base64') };
}

/** A data URL's percent-encoded payload as bytes: each %XX its byte, every other character its UTF-8. */
function percentBytes(payload: string): Buffer {
  if (!payload.includes('%')) return Buffer.from(payload, 'utf8');
  const parts: Buffer[] = [];
  let at = 0;
  for (const m of payload.matchAll(/(?:%[0-9a-f]{2})+/gi)) {
    parts.push(Buffer.from(payload.slice(at, m.index), 'utf8'), Buffer.from(m[0].replace(/%/g, ''), 'hex'));
    at = m.index + m[0].length;
  }
  parts.push(Buffer.from(payload.slice(at), 'utf8'));
  return Buffer.concat(parts);
}

/** How encodeURIComponent writes each byte: the unreserved ASCII characters as they are, every other byte as %XX. */
const PERCENT_OF_BYTE: readonly string[] = Array.from({ length: 256 }, (_, b) => {
  const c = String.fromCharCode(b);
  return /^[A-Za-z0-9\-_.!~*'()]$/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
});

/** Bytes percent-encoded as encodeURIComponent writes text (see PERCENT_OF_BYTE). */
function percentEncoded(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += PERCENT_OF_BYTE[b]!;
  return out;
}

/**
 * Whether a signature or encrypted value is what it claims: base64, or Claude's signed thinking that agentgw carries for
 * another dialect (its own mark, then base64). Anything else is text, and read.
 */
export function isOpaque(value: string): boolean {
  if (isCarriedThinking(value)) return BASE64_ONLY.test(value.slice(value.indexOf(':') + 1));
  return BASE64_ONLY.test(value);
}

/** The head of a data URL of an image or PDF in base64, and nothing else in it (no parameter to hold text). */
const BINARY_DATA_URL_HEAD = /^data:(?:image\/[a-z0-9.+-]{1,64}|application\/pdf);base64$/i;

/** An image or PDF as a data URL whose payload is base64 (`data:image/png;base64,...`). */
function isBinaryDataUrl(value: string): boolean {
  if (!value.startsWith('data:')) return false;
  const comma = value.indexOf(',');
  return comma !== -1 && comma <= 100 && BINARY_DATA_URL_HEAD.test(value.slice(0, comma)) && BASE64_ONLY.test(value.slice(comma + 1));
}

/** Writes `holder[key] = value` as an own data property, `__proto__` included. */
function put(holder: Json | unknown[], key: string | number, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
  else (holder as Record<string | number, unknown>)[key] = value;
}

/**
 * Visits every string of `holder[key]` (the value itself if it is one), every number long enough to hold PII (as its
 * text; a replacement becomes a string) and every key that is not in DIALECT_MEMBERS (a replaced key is renamed), at any
 * depth, iteratively, reporting each as `field`. Members `carriesNoText` names are skipped.
 */
export function visitAll(holder: Json | unknown[], key: string | number, visit: TextVisitor, field: string): void {
  const holders: Array<Json | unknown[]> = [holder];
  const keys: Array<string | number> = [key];
  // Per queued visit: whether it lies below a client-shaped member (see clientShaped), where nothing is skipped.
  const shaped: boolean[] = [clientShaped(holder, key)];
  while (holders.length > 0) {
    const h = holders.pop()!;
    const k = keys.pop()!;
    const free = shaped.pop()!;
    const v = (h as Record<string | number, unknown>)[k];
    if (typeof v === 'string') {
      if (v.length === 0) continue;
      // Text the upstream decodes (a text file as a data URL or base64 source) is read decoded, and written back encoded.
      const decoded = free || typeof k !== 'string' || Array.isArray(h) ? undefined : decodedText(h, k, v);
      if (decoded !== undefined) {
        const r = visit(decoded.text, field);
        if (r !== undefined && r !== decoded.text) put(h, k, decoded.encode(r));
        continue;
      }
      // Tool call arguments are JSON text that the upstream parses: the PII module reads them as such (json-text.ts).
      const r = visit(v, k === 'arguments' ? 'arguments' : field);
      if (r !== undefined && r !== v) put(h, k, r);
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v) || (v < 1e6 && v > -1e6)) continue;
      const text = String(v);
      if (text.length < NUMBER_TEXT_MIN) continue;
      const r = visit(text, field);
      if (r !== undefined && r !== text) put(h, k, r);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        holders.push(v);
        keys.push(i);
        shaped.push(free);
      }
    } else if (typeof v === 'object' && v !== null) {
      const o = v as Json;
      const names = Object.keys(o);
      for (let i = names.length - 1; i >= 0; i--) {
        const name = names[i]!;
        if (!free && carriesNoText(o, name, o[name])) continue;
        holders.push(o);
        keys.push(name);
        shaped.push(free || clientShaped(o, name));
      }
      for (const name of names) {
        if (DIALECT_MEMBERS.has(name)) continue;
        const renamed = visit(name, field);
        if (renamed === undefined || renamed === name) continue;
        // Keys are renamed after their values are queued under the old name: the value moves with a holder wrapper.
        renameKey(o, name, renamed, holders, keys);
      }
    }
  }
}

/**
 * visitAll of one member of an object the walk did not enter itself (a body's top level, an item read member by member):
 * its name too is read when it is not a dialect member, and renamed when the visitor replaces it.
 */
export function visitMember(holder: Json, key: string, visit: TextVisitor, field: string): void {
  let name = key;
  if (!DIALECT_MEMBERS.has(key)) {
    const renamed = visit(key, field);
    if (renamed !== undefined && renamed !== key) name = renameKey(holder, key, renamed, [], []);
  }
  visitAll(holder, name, visit, field);
}

/** Renames `o[from]` to `to` (a fresh name if taken), fixing the queued visits of its value. */
function renameKey(o: Json, from: string, to: string, holders: Array<Json | unknown[]>, keys: Array<string | number>): string {
  let name = to;
  for (let i = 2; Object.prototype.hasOwnProperty.call(o, name); i++) name = `${to}#${i}`;
  const value = o[from];
  delete o[from];
  put(o, name, value);
  for (let i = holders.length - 1; i >= 0; i--) {
    if (holders[i] === o && keys[i] === from) keys[i] = name;
  }
  return name;
}
